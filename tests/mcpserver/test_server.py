"""The MCP memory server against the official SDK's client: in process, over stdio, over HTTP."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from memstore import Access, AccessPolicy, Actor, FakeClock, Surface, open_store
from memstore.mcp.server import build_server
from memstore.mcp.service import MemoryService
from memstore.verify import GitCodebase, WorkingTree
from memstore.verify.git import GitRepository

WHO = ["-c", "user.name=a", "-c", "user.email=a@b"]
CONSTANTS = '// API constants\n\nexport const API_VERSION = "v2.1.4";\n'


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *WHO, *args], check=True, capture_output=True)


def _policy() -> AccessPolicy:
    return (
        AccessPolicy()
        .grant("ana", "acme/api", Access.WRITE)
        .grant("rae", "acme/api", Access.READ)
        .grant("ana", "acme/other", Access.WRITE)
    )


def _service(store_uri: str, repo: Path, user: str = "ana", surface: Surface = Surface.CODING_AGENT) -> MemoryService:
    store = open_store(store_uri, access=_policy(), clock=FakeClock())
    git = GitRepository(repo)
    head = GitCodebase(git, "HEAD")
    return MemoryService(store, Actor(user), surface, "acme/api", head, WorkingTree(repo, history=head))


class _WithoutSearch:
    """A store that does not search (another project's, say): everything but ``search``."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        if name == "search":
            raise AttributeError(name)
        return getattr(self.inner, name)


def _run(body: Callable[[], Awaitable[None]]) -> None:
    anyio.run(body)


async def _call(client: Client, tool: str, **arguments: Any) -> tuple[bool, Any]:
    result = await client.call_tool(tool, arguments)
    if result.is_error:
        return True, result.content[0].text  # type: ignore[union-attr]
    return False, result.structured_content


def test_tools_are_listed_with_schemas_and_descriptions(tmp_path: Path, repo: Path) -> None:
    async def body() -> None:
        async with Client(build_server(_service(f"sqlite:///{tmp_path / 'm.db'}", repo))) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == {
                "store_memory", "recent_memories", "search_memories", "verify_memory", "refresh_memory",
                "vote_memory", "retire_memory", "get_memory", "memory_history",
            }  # fmt: skip
            assert tools["store_memory"].input_schema["required"] == ["subject", "fact", "citations"]
            assert "path:line" in (tools["store_memory"].description or "")
            assert tools["recent_memories"].annotations is not None
            assert tools["recent_memories"].annotations.read_only_hint is True
            resources = (await client.list_resources()).resources
            assert [str(r.uri) for r in resources] == ["memstore://acme/api/memories"]

    _run(body)


def test_a_searching_store_offers_search(tmp_path: Path, repo: Path) -> None:
    async def body() -> None:
        async with Client(build_server(_service(f"ranked:///{tmp_path / 'r.db'}", repo))) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert "search_memories" in names
            await _call(client, "store_memory", subject="API version", fact="v2.1.4", citations=["src/constants.ts:3"])
            error, found = await _call(client, "search_memories", query="API version")
            assert not error
            assert [m["subject"] for m in found["memories"]] == ["API version"]

    _run(body)


def test_store_recall_verify_correct_refresh_retire(tmp_path: Path, repo: Path) -> None:
    """A memory whose line moved is re-anchored; one the code contradicts gets a correction."""
    db = f"sqlite:///{tmp_path / 'm.db'}"

    async def body() -> None:
        async with Client(build_server(_service(db, repo))) as client:
            error, sync = await _call(
                client,
                "store_memory",
                subject="API version",
                fact='The API version is "v2.1.4".',
                citations=["src/constants.ts:3"],
                reason="Clients send it.",
            )
            assert not error
            assert sync["citations"] == ["src/constants.ts:3"]
            _, readme = await _call(client, "store_memory", subject="API constants",
                                    fact="constants.ts opens by naming the API constants.",
                                    citations=["src/constants.ts:1"])  # fmt: skip
            error, recent = await _call(client, "recent_memories", limit=10)
            assert [m["id"] for m in recent["memories"]] == [readme["id"], sync["id"]]

        # the code moves and changes under the memories
        (repo / "src" / "constants.ts").write_text("// moved\n" + CONSTANTS.replace("v2.1.4", "v2.2.0"))
        _git(repo, "commit", "-qam", "release")
        async with Client(build_server(_service(db, repo))) as client:
            _, contradicted = await _call(client, "verify_memory", memory_id=sync["id"])
            assert contradicted["verdict"] == "contradicted"
            assert contradicted["usable"] is False
            assert contradicted["citations"][0]["text_now"].strip() == 'export const API_VERSION = "v2.2.0";'
            assert contradicted["corrected"]["fact"] == 'The API version is "v2.2.0".'
            assert contradicted["corrected"]["citations"] == ["src/constants.ts:4"]
            _, moved = await _call(client, "verify_memory", memory_id=readme["id"])
            assert moved["verdict"] == "reanchored"
            assert moved["citations"][0]["now_at"] == "src/constants.ts:2"
            fixed = contradicted["corrected"]
            error, correction = await _call(client, "store_memory", supersedes=sync["id"], **fixed)
            assert not error
            assert correction["supersedes"] == sync["id"]
            error, _ = await _call(client, "refresh_memory", memory_id=correction["id"])
            assert not error
            error, gone = await _call(client, "retire_memory", memory_id=readme["id"], reason="moved off")
            assert gone == {"id": readme["id"], "status": "retired", "reason": "moved off"}
            _, recent = await _call(client, "recent_memories")
            assert [m["id"] for m in recent["memories"]] == [correction["id"]]
            error, message = await _call(client, "retire_memory", memory_id=sync["id"], reason="again")
            assert error  # the superseded version is out of use
            assert "superseded" in message

    _run(body)


def test_a_memory_and_its_versions_read_whole_and_errors_carry_their_kind(tmp_path: Path, repo: Path) -> None:
    """get_memory and memory_history give every field (each citation's recorded text, the status);
    a failure's structured content names its kind, so a program can tell "not found" from "denied"."""
    db = f"sqlite:///{tmp_path / 'm.db'}"

    async def body() -> None:
        async with Client(build_server(_service(db, repo))) as ana:
            _, old = await _call(ana, "store_memory", subject="API version", fact='"v2.1.4"',
                                 citations=[{"path": "src/constants.ts", "line": 3, "snippet": "made up"}])  # fmt: skip
            _, new = await _call(ana, "store_memory", subject="API version", fact='"v2.1.5"',
                                 citations=["src/constants.ts:3"], supersedes=old["id"])  # fmt: skip
            error, whole = await _call(ana, "get_memory", memory_id=old["id"])
            assert not error
            assert whole["status"] == "superseded"
            assert whole["surface"] == "coding_agent"
            # the server reads the cited text from the repository: a text given with the citation is not kept
            assert whole["citations"][0]["snippet"] == 'export const API_VERSION = "v2.1.4";'
            assert len(whole["citations"][0]["commit"]) == 40
            _, history = await _call(ana, "memory_history", memory_id=new["id"])
            assert [(v["id"], v["status"]) for v in history["versions"]] == [
                (old["id"], "superseded"),
                (new["id"], "active"),
            ]
        async with Client(build_server(_service(db, repo, user="rae"))) as rae:
            denied = await rae.call_tool("retire_memory", {"memory_id": new["id"], "reason": "no"})
            assert denied.is_error
            assert denied.structured_content == {"error": "permission_denied", "message": denied.content[0].text}  # type: ignore[union-attr]
            missing = await rae.call_tool("get_memory", {"memory_id": "mem_00000000000000000000000000"})
            assert (missing.structured_content or {})["error"] == "not_found"
            bad = await rae.call_tool("recent_memories", {"limit": 0})
            assert (bad.structured_content or {})["error"] == "invalid"

    _run(body)


def test_a_server_without_a_repository_keeps_the_cited_text_it_is_given(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'm.db'}", access=_policy(), clock=FakeClock())
    service = MemoryService(store, Actor("ana"), Surface.CLI, "acme/api")

    async def body() -> None:
        async with Client(build_server(service)) as client:
            cited = {"path": "src/a.py", "line": 3, "end_line": 4, "snippet": "X = 1\nY = 2", "commit": "ab" * 20}
            _, made = await _call(client, "store_memory", subject="s", fact="f", citations=[cited])
            _, whole = await _call(client, "get_memory", memory_id=made["id"])
            assert whole["citations"] == [cited]
            error, message = await _call(client, "store_memory", subject="s", fact="f",
                                         citations=[{"path": "a.py", "line": 1, "colour": "red"}])  # fmt: skip
            assert error
            assert "colour" in message

    _run(body)


def test_scope_is_fixed_at_start_and_the_rules_hold(tmp_path: Path, repo: Path) -> None:
    db = f"sqlite:///{tmp_path / 'm.db'}"

    async def body() -> None:
        async with Client(build_server(_service(db, repo))) as ana:
            _, fact = await _call(ana, "store_memory", subject="s", fact="f", citations=["README.md:1"])
            _, mine = await _call(ana, "store_memory", subject="tabs", fact="Ana likes tabs.", citations=[],
                                  kind="preference")  # fmt: skip
        other = _service(db, repo)
        other.repo = "acme/other"
        async with Client(build_server(other)) as elsewhere:
            _, theirs = await _call(elsewhere, "store_memory", subject="o", fact="other", citations=["README.md:1"])
            _, listed = await _call(elsewhere, "recent_memories")
            # at one instant: order by id; her preference follows her to the other repository
            assert sorted(m["id"] for m in listed["memories"]) == sorted([theirs["id"], mine["id"]])
        async with Client(build_server(_service(db, repo, user="rae"))) as rae:
            _, seen = await _call(rae, "recent_memories")
            assert [m["id"] for m in seen["memories"]] == [fact["id"]]  # facts yes; Ana's preference never
            error, message = await _call(rae, "retire_memory", memory_id=fact["id"], reason="no")
            assert error
            assert "needs write access" in message
            error, message = await _call(rae, "refresh_memory", memory_id=mine["id"])
            assert error
            assert message.endswith(f"memory '{mine['id']}' not found")
            error, missing = await _call(rae, "refresh_memory", memory_id="mem_00000000000000000000000000")
            assert missing.endswith("memory 'mem_00000000000000000000000000' not found")  # the same words
            error, message = await _call(rae, "verify_memory", memory_id=theirs["id"])
            assert message.endswith(f"memory '{theirs['id']}' not found")  # another repository's: not here
        async with Client(build_server(_service(db, repo, surface=Surface.CODE_REVIEW))) as review:
            _, seen = await _call(review, "recent_memories")
            assert [m["id"] for m in seen["memories"]] == [fact["id"]]  # review sees no preferences

    _run(body)


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("store_memory", {"subject": "s", "fact": "f"}, "citations"),
        ("store_memory", {"subject": 7, "fact": "f", "citations": ["README.md:1"]}, "subject"),
        ("store_memory", {"subject": "s", "fact": "f" * 10_000_000, "citations": ["README.md:1"]}, "at most 4000"),
        ("store_memory", {"subject": "s", "fact": "f", "citations": ["../../etc/passwd:1"]}, "'..' segments"),
        ("store_memory", {"subject": "s", "fact": "f", "citations": [".git/config:1"]}, "git's own directory"),
        ("store_memory", {"subject": "s", "fact": "f", "citations": [".GIT/config:1"]}, "git's own directory"),
        ("store_memory", {"subject": "s", "fact": "f", "citations": ["README.md:40"]}, "README.md has 1 lines"),
        ("store_memory", {"subject": "s", "fact": "f", "citations": ["README.md:1"], "kind": "rumour"}, "kind"),
        ("recent_memories", {"limit": "all"}, "limit"),
        ("recent_memories", {"limit": 100_000}, "from 1 to 200"),
        ("recent_memories", {"limit": 10**30}, f"got {10**30}"),  # the number as given, not cut short
        ("recent_memories", {"limit": True}, "limit"),  # not 1
        ("store_memory", {"subject": "s", "fact": "f", "citations": ["README.md:1\n"]}, "control characters"),
        ("verify_memory", {"memory_id": ["mem"]}, "memory_id"),
        ("retire_memory", {"memory_id": "mem_x"}, "reason"),
        ("retire_memory", {"memory_id": "mem_x", "reason": "r"}, "not found"),
        ("no_such_tool", {}, "no_such_tool"),
    ],
)
def test_bad_input_is_a_tool_error_and_the_server_keeps_serving(
    tmp_path: Path, repo: Path, tool: str, arguments: dict[str, Any], message: str
) -> None:
    db = f"sqlite:///{tmp_path / 'm.db'}"

    async def body() -> None:
        async with Client(build_server(_service(db, repo))) as client:
            result = await client.call_tool(tool, arguments)
            assert result.is_error
            assert message in result.content[0].text  # type: ignore[union-attr]
            error, recent = await _call(client, "recent_memories")
            assert not error
            assert recent == {"memories": []}  # nothing half-written

    _run(body)


def _stdio(db: str, repo: Path, *extra: str) -> StdioServerParameters:
    args = ["-m", "memstore", "mcp", "--store", db, "--as", "ana", "--repo", str(repo), "--name", "acme/api", *extra]
    return StdioServerParameters(command=sys.executable, args=args)


def test_over_stdio_as_a_client_launches_it(tmp_path: Path, repo: Path) -> None:
    db = f"sqlite:///{tmp_path / 'm.db'}"
    events = tmp_path / "events.jsonl"

    async def body() -> None:
        async with Client(_stdio(db, repo, "--events", str(events))) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert names == {
                "store_memory", "recent_memories", "search_memories", "verify_memory", "refresh_memory",
                "vote_memory", "retire_memory", "get_memory", "memory_history",
            }  # fmt: skip
            _, made = await _call(
                client, "store_memory", subject="API version", fact='"v2.1.4"', citations=["src/constants.ts:3"]
            )
            _, verdict = await _call(client, "verify_memory", memory_id=made["id"])
            assert verdict["verdict"] == "valid"
            error, _ = await _call(client, "store_memory", subject="x", fact="y", citations=[".git/HEAD:1"])
            assert error
            _, recent = await _call(client, "recent_memories")
            assert [m["id"] for m in recent["memories"]] == [made["id"]]

    _run(body)
    kinds = [line.split('"kind": "')[1].split('"')[0] for line in events.read_text().splitlines()]
    assert kinds == ["store", "verdict", "recall"]


def test_two_clients_on_one_sqlite_store_at_once(tmp_path: Path, repo: Path) -> None:
    db = f"sqlite:///{tmp_path / 'm.db'}"

    async def writer(name: str, count: int) -> None:
        async with Client(_stdio(db, repo)) as client:
            for i in range(count):
                error, _ = await _call(
                    client, "store_memory", subject=f"{name} {i}", fact="f", citations=["README.md:1"]
                )
                assert not error

    async def body() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(writer, "one", 25)
            group.start_soon(writer, "two", 25)
        async with Client(_stdio(db, repo)) as client:
            _, recent = await _call(client, "recent_memories", limit=200)
            assert len(recent["memories"]) == 50
            assert len({m["id"] for m in recent["memories"]}) == 50

    _run(body)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, seconds: float = 30) -> None:
    """Until a server listens on ``port`` of the loopback (or ``seconds`` pass)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)


def test_over_streamable_http_on_localhost(tmp_path: Path, repo: Path) -> None:
    port = free_port()
    db = f"sqlite:///{tmp_path / 'm.db'}"
    argv = [sys.executable, "-m", "memstore", "mcp", "--store", db, "--as", "ana", "--repo", str(repo),
            "--name", "acme/api", "--transport", "http", "--port", str(port)]  # fmt: skip
    server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for_port(port)

        async def body() -> None:
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                _, made = await _call(client, "store_memory", subject="s", fact="f", citations=["README.md:1"])
                _, recent = await _call(client, "recent_memories")
                assert [m["id"] for m in recent["memories"]] == [made["id"]]

        _run(body)
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("store_memory", {"subject": "s", "citations": ["README.md:1"]}, "store_memory: 'fact' is required"),
        (
            "store_memory",
            {"subject": 3, "fact": "f", "citations": "README.md:1"},
            "store_memory: 'subject' input should be a valid string; 'citations' input should be a valid list",
        ),
        ("retire_memory", {"memory_id": "mem_x"}, "retire_memory: 'reason' is required"),
        ("search_memories", {"query": "API"}, "search_memories: this store does not search"),
    ],
)
def test_a_mistaken_call_is_told_what_to_fix_in_a_sentence(
    tmp_path: Path, repo: Path, tool: str, arguments: dict[str, Any], message: str
) -> None:
    """No pydantic text, no link to its documentation; a tool the store lacks says what to call instead."""

    service = _service(f"sqlite:///{tmp_path / 'm.db'}", repo)
    if tool == "search_memories":
        service.store = _WithoutSearch(service.store)  # type: ignore[assignment]

    async def body() -> None:
        async with Client(build_server(service)) as client:
            error, text = await _call(client, tool, **arguments)
            assert error
            assert text.startswith(message), text
            assert "pydantic" not in text
            assert "http" not in text

    _run(body)


def test_votes_over_mcp_are_the_stores_and_sink_a_memory_in_search(tmp_path: Path, repo: Path) -> None:
    """vote_memory keeps the vote (author, reason, time) in the store; search_memories weighs it;
    a reader with read access alone is refused; ``up`` must be a boolean, not "yes"."""
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    writer, reader = _service(uri, repo), _service(uri, repo, user="rae")

    async def body() -> None:
        async with Client(build_server(writer)) as client:
            _, first = await _call(
                client, "store_memory", subject="API version", fact="v2.1.4", citations=["src/constants.ts:3"]
            )
            _, second = await _call(
                client, "store_memory", subject="API version", fact="v2.1.5", citations=["src/constants.ts:3"]
            )
            _, found = await _call(client, "search_memories", query="API version")
            assert [m["id"] for m in found["memories"]] == [second["id"], first["id"]]
            error, voted = await _call(
                client, "vote_memory", memory_id=second["id"], up=False, reason="the code says v2.1.4"
            )
            assert not error
            assert (voted["vote"], voted["reason"]) == ("down", "the code says v2.1.4")
            _, found = await _call(client, "search_memories", query="API version")
            assert [m["id"] for m in found["memories"]] == [first["id"], second["id"]]
            error, text = await _call(client, "vote_memory", memory_id=first["id"], up="yes", reason="r")
            assert error
            assert "'up' input should be a valid boolean" in text
        async with Client(build_server(reader)) as client:
            error, text = await _call(client, "vote_memory", memory_id=first["id"], up=True, reason="fine")
            assert error
            assert "write access" in text
        votes = writer.store.votes(second["id"], actor=Actor("ana"))  # type: ignore[attr-defined]
        assert [(v.author, v.up, v.reason) for v in votes] == [("ana", False, "the code says v2.1.4")]

    _run(body)
