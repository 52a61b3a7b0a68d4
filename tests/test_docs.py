"""The README and docs/ document every command and option, and every code block in them runs.

Blocks tagged ``python`` run (``>>>`` blocks as doctests), ``bash`` blocks run line by line in a
scratch folder that holds what they refer to (a clone of a fixture repository, a custom store
module, the README's agent), ``toml`` and ``yaml`` blocks parse. ``text`` blocks are output or
synopses. Two blocks are exercised elsewhere: the README's set-up commands (a fresh virtual
environment and the full run) are what ``.ci/run`` does on a clean checkout, which this file
checks it does. What the docs and the package's docstrings cite (``module.py:N``, a
``memstore.x.y`` name) is there.
"""

from __future__ import annotations

import doctest
import importlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import click
import pytest
import yaml

from memstore.cli import main
from memstore.harness.analysis.metric_registry import metric_table
from memstore.harness.run.boundary.agents import AGENTS
from memstore.store import BACKENDS
from tests.extras import EXTRAS, need

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = {
    p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8")
    for p in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
}
FENCE = re.compile(r"^```(?P<lang>[a-z]*)\n(?P<body>.*?)^```", re.S | re.M)
SETUP = {  # the README's two set-up commands: .ci/run runs them on a clean checkout
    "python3 -m venv .venv && .venv/bin/pip install -e '.[dev]' && .venv/bin/memstore eval",
    "python3 -m venv .venv && .venv/bin/pip install -e '.[dev]' && .venv/bin/pytest -n 2 --dist loadfile",
}


def _commands(group: click.Group, prefix: str = "memstore") -> list[tuple[str, click.Command]]:
    found = []
    context = click.Context(group)
    for name in sorted(group.list_commands(context)):  # the CLI loads its commands when asked: ask
        command = group.get_command(context, name)
        assert command is not None, name
        if isinstance(command, click.Group):
            found += _commands(command, f"{prefix} {name}")
        else:
            found.append((f"{prefix} {name}", command))
    return found


def _blocks(lang: str) -> list[tuple[str, int, str]]:
    return [
        (page, text[: m.start()].count("\n") + 1, m.group("body"))
        for page, text in sorted(PAGES.items())
        for m in FENCE.finditer(text)
        if m.group("lang") == lang
    ]


@pytest.mark.parametrize(("command", "options"), [(n, c) for n, c in _commands(main)], ids=lambda v: str(v))
def test_every_command_and_option_is_in_the_readme(command: str, options: click.Command) -> None:
    assert f"`{command}" in README
    for param in options.params:
        if (
            isinstance(param, click.Option) and param.name != "help" and not param.hidden
        ):  # hidden: kept for old scripts
            assert any(opt in README for opt in param.opts), f"{command} {param.opts}"


def test_the_command_list_above_is_not_empty() -> None:
    """The check above is parametrised by the CLI's commands: an empty list would pass it vacuously."""
    assert {"memstore eval", "memstore mcp", "memstore scenarios validate"} <= {n for n, _ in _commands(main)}


def test_the_metrics_page_holds_the_registry_table() -> None:
    assert metric_table() in PAGES["docs/metrics.md"]


def test_ci_runs_the_readme_set_up_and_test_commands() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "pip install --quiet -e '.[dev]'" in ci
    assert (
        "\npytest -n 2 --dist loadfile || status=$?" in ci
    )  # the README's test command, from the same virtual environment
    assert {body.strip() for _, _, body in _blocks("bash")} >= SETUP
    # the main job on the whole library, gated against reports/baseline and held to its bytes
    assert '\nmemstore eval --baseline reports/baseline --out "$run" || eval_status=$?' in ci
    assert '\n    python evals/check_baseline.py "$run" reports/baseline || status=1' in ci


# -- a scratch folder with what the examples refer to ----------------------------------------------

MYSTORE = '''
from memstore.backends.memory import open_memory


def open_store(uri, options):
    """A third-party store: here, the reference rules in memory."""
    return open_memory("memory://", options)
'''


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the README's agent, a custom store package, the scenario library and a
    repository at path/to/repo whose code the README's memory cites."""
    root = tmp_path_factory.mktemp("docs")
    agent = next(body for _, _, body in _blocks("python") if body.startswith("# my_agent.py"))
    (root / "my_agent.py").write_text(agent)
    (root / "mypackage").mkdir()
    (root / "mypackage" / "__init__.py").write_text("")
    (root / "mypackage" / "mystore.py").write_text(MYSTORE)
    (root / "scenarios").symlink_to(ROOT / "scenarios")
    (root / "evals").symlink_to(ROOT / "evals")
    repo = root / "path" / "to" / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    for path in ("src/client/sdk/constants.ts", "server/routes/api.go", "docs/api-reference.md"):
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_bytes((ROOT / "fixtures" / "api-version-sync" / path).read_bytes())
    who = ["-c", "user.name=a", "-c", "user.email=a@b"]
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    subprocess.run(["git", "-C", str(repo), *who, "commit", "-q", "-m", "api"], check=True)
    return root


def _environment(scratch: Path) -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    return {**os.environ, "PATH": path, "PYTHONPATH": str(scratch), "MEMSTORE_USER": "ana"}


def _python(body: str, scratch: Path, namespace: dict[str, object]) -> None:
    code = body.replace("/tmp/memories.db", str(scratch / "memories.db"))
    cwd = Path.cwd()
    os.chdir(scratch)
    try:
        exec(compile(code, "<docs>", "exec"), namespace)
    finally:
        os.chdir(cwd)


_PYTHON = [b for b in _blocks("python") if not b[2].startswith("# my_agent.py")]


@pytest.mark.parametrize(("page", "line", "body"), _PYTHON, ids=[f"{p}:{n}" for p, n, _ in _PYTHON])
def test_python_blocks_run(page: str, line: int, body: str, scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(scratch))
    for registry in (AGENTS, BACKENDS):  # what a page registers (an agent, a store) is undone after it
        monkeypatch.setattr(registry, "registered", dict(registry.registered))
    if body.lstrip().startswith(">>>"):
        found = doctest.DocTestParser().get_doctest(body, {}, f"{page}:{line}", page, line)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        runner.run(found)
        assert runner.failures == 0
        return
    if body.startswith("# tests/test_memstore_conformance.py"):  # a test file: run it with pytest
        test = scratch / "conformance" / "test_memstore_conformance.py"
        test.parent.mkdir(exist_ok=True)
        test.write_text(
            "from mypackage.mystore import open_store as _open\nfrom memstore.backends import StoreOptions\n"
            "from memstore.ids import UlidIds\n\n\ndef MyStore(access, clock, expiry):\n"
            "    return _open('memory://', StoreOptions(access, clock, expiry, UlidIds(1)))\n\n\n" + body
        )
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", str(test)],
                              capture_output=True, text=True, env=_environment(scratch), check=False)  # fmt: skip
        assert done.returncode == 0, done.stdout[-3000:]
        assert " passed" in done.stdout
        return
    namespace: dict[str, object] = {"__name__": "__docs__"}
    if page == "docs/verification.md":  # the README's example first: it makes the store and the memory
        _python(next(b for p, _, b in _PYTHON if p == "README.md"), scratch, namespace)
    _python(body, scratch, namespace)


# The real-model lane's set-up and run (README, "A real model"): an install into the checkout's
# environments, run by tests/agents/test_real_model.py on what .ci/run installs.
REAL_MODEL = "python -m memstore.agents.localmodel"
_BASH = [b for b in _blocks("bash") if b[2].strip() not in SETUP and REAL_MODEL not in b[2]]


@pytest.mark.slow
@pytest.mark.parametrize(("page", "line", "body"), _BASH, ids=[f"{p}:{n}" for p, n, _ in _BASH])
def test_bash_blocks_run(page: str, line: int, body: str, scratch: Path) -> None:
    if "mcp:server-memory" in body and shutil.which("mcp-server-memory") is None:
        message = "mcp-server-memory is not installed: npm install -g @modelcontextprotocol/server-memory"
        if os.environ.get("MEMSTORE_REQUIRE_THIRD_PARTY") == "1":
            pytest.fail(message)
        pytest.skip(message)
    if "mem0:" in body:
        need("mem0")
    if "memcite:" in body:
        need("agentic_memory")
    if "memstore verify" in body:  # it verifies the README example's store
        namespace: dict[str, object] = {"__name__": "__docs__"}
        _python(next(b for p, _, b in _PYTHON if p == "README.md"), scratch, namespace)
    commands = [c for c in re.sub(r"\\\n\s*", " ", body).splitlines() if c.strip() and not c.startswith("#")]
    for command in commands:
        argv = shlex.split(command, comments=True)
        argv = [a.replace("/tmp/memories.db", str(scratch / "memories.db")) for a in argv]
        if argv[0] == "pytest":
            argv = [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "-q",
                "--rootdir",
                str(scratch),
                *argv[1:],
            ]
            argv = [a if not a.startswith("evals/") else str(ROOT / a) for a in argv]
        elif "--out" in argv and argv[:2] == ["memstore", "eval"]:  # every run writes afresh
            argv.append("--overwrite")
        done = subprocess.run(argv, cwd=scratch, capture_output=True, text=True, env=_environment(scratch), check=False)
        # eval, compare and verify decide: 0 passed, 1 failed (or bad memories), 3 undecided
        assert done.returncode in (0, 1, 3), f"{page}:{line}: {command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        if not any(word in command for word in ("verify", "eval", "compare")):  # the commands that decide
            assert done.returncode == 0, f"{page}:{line}: {command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"


def _serves(config: dict[str, object], scratch: Path) -> None:
    """Start the server a configuration describes (its store in the scratch folder) and list its tools."""
    assert config["command"] == "memstore"
    args = [str(a).replace("/home/you/.memstore/memories.db", str(scratch / "mcp-example.db")) for a in config["args"]]  # type: ignore[union-attr]
    assert args[0] == "mcp"

    async def body() -> list[str]:
        from mcp import Client, StdioServerParameters

        server = StdioServerParameters(
            command=sys.executable, args=["-m", "memstore", *args], cwd=str(scratch / "path/to/repo")
        )
        async with Client(server) as client:
            return [t.name for t in (await client.list_tools()).tools]

    import anyio

    subprocess.run(["git", "-C", str(scratch / "path/to/repo"), "remote", "add", "origin", "https://github.com/acme/api.git"],
                   capture_output=True, check=False)  # fmt: skip
    assert "verify_memory" in anyio.run(body)


@pytest.mark.parametrize(("page", "line", "body"), _blocks("toml"), ids=lambda v: str(v)[:40])
def test_toml_blocks_parse_and_work(page: str, line: int, body: str, scratch: Path) -> None:
    data = tomllib.loads(body)
    if "mcp_servers" in data:  # a Codex CLI configuration
        _serves(data["mcp_servers"]["memstore"], scratch)
        return
    assert data["users"]["rae"] == {"acme/api": "read"}
    (scratch / "access.toml").write_text(body)
    store = f"sqlite:///{scratch / 'access-example.db'}"
    env = _environment(scratch)
    add = ["memstore", "memories", "add", "--store", store, "--as", "ana", "--access", str(scratch / "access.toml"),
           "--repo", "acme/api", "--subject", "s", "--fact", "f", "--cite", "a.py:1"]  # fmt: skip
    assert subprocess.run(add, env=env, capture_output=True, check=False).returncode == 0
    listed = subprocess.run(
        ["memstore", "memories", "list", "--store", store, "--as", "rae", "--access", str(scratch / "access.toml"),
         "--repo", "acme/api", "--format", "json"],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert len(listed.stdout.strip()) > 2  # rae reads what ana stored


@pytest.mark.parametrize(("page", "line", "body"), _blocks("json"), ids=lambda v: str(v)[:40])
def test_json_blocks_are_mcp_configurations_that_start(page: str, line: int, body: str, scratch: Path) -> None:
    _serves(json.loads(body)["mcpServers"]["memstore"], scratch)


def test_yaml_blocks_are_scenarios() -> None:
    text = (ROOT / "scenarios" / "README.md").read_text()
    blocks = [m.group("body") for m in FENCE.finditer(text) if m.group("lang") == "yaml"]
    assert len(blocks) == 2
    documents = [yaml.safe_load(b) for b in blocks]
    assert documents[0]["name"] == "api-version-moved"
    assert documents[1]["generator"]["repositories"] == 100


@pytest.mark.parametrize("page", sorted(PAGES))
def test_every_link_leads_somewhere(page: str) -> None:
    base = (ROOT / page).parent
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", PAGES[page]):
        if not target.startswith(("http://", "https://")):
            assert (base / target).exists(), f"{page} links to {target}, which is not there"


# -- what the docs and docstrings cite ------------------------------------------------------------

SOURCES = {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in sorted(ROOT.glob("memstore/**/*.py"))}
CITED_LINE = re.compile(r"(?<![\w./-])((?:[\w-]+/)*[\w-]+\.py):(\d+)\b")
NAMED = re.compile(r"`(memstore(?:\.\w+)+(?::\w+(?:\.\w+)*)?)(?:\(\))?`")
_BASES = ("", "memstore/", "memstore/harness/")  # what a path is written relative to
_OURS = {"memstore", "tests", "evals", "adapters"} | {
    p.name for base in _BASES[1:] for p in (ROOT / base).iterdir() if p.is_dir() and p.name != "__pycache__"
}
_GROUPS = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["entry-points"])


def _places(texts: dict[str, str], pattern: re.Pattern[str]) -> list[tuple[str, re.Match[str]]]:
    return [
        (f"{where}:{text[: m.start()].count(chr(10)) + 1}", m)
        for where, text in sorted(texts.items())
        for m in pattern.finditer(text)
    ]


def _our_files(path: str) -> list[Path] | None:
    """The files of this project a cited path may mean; None for a path of someone else's code."""
    if "/" in path:
        return [ROOT / base / path for base in _BASES] if path.split("/")[0] in _OURS else None
    return [ROOT / s for s in SOURCES if Path(s).name == path] or None


def _stale_lines(texts: dict[str, str]) -> list[str]:
    """``module.py:N`` citations of this project's code that point past the end of the file, or at
    no file. A path of someone else's code (an example such as ``src/app.py:3``) is left alone."""
    stale = []
    for where, m in _places(texts, CITED_LINE):
        path, line = m.group(1), int(m.group(2))
        files = _our_files(path)
        if files is not None and not any(
            p.is_file() and line <= len(p.read_text(encoding="utf-8").splitlines()) for p in files
        ):
            stale.append(f"{where}: {m.group(0)}")
    return stale


_OPTIONAL = {module.partition(".")[0] for module in EXTRAS}  # the packages optional extras bring


def _resolves(name: str) -> bool:
    """Whether ``name`` names a module or an object (one behind an optional extra that is missing
    here counts where its module is there, or its face lists it)."""
    module, _, attribute = name.partition(":")
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:end]))
        except ModuleNotFoundError as exc:
            if (exc.name or "").partition(".")[0] in _OPTIONAL:
                return True  # the module is there; what it imports is an extra not installed here
            continue
        for part in [*parts[end:], *filter(None, attribute.split("."))]:
            try:
                present = hasattr(found, part)
            except ModuleNotFoundError as exc:  # a face's lazy name behind an optional extra missing here
                if (exc.name or "").partition(".")[0] in _OPTIONAL:
                    return part in getattr(found, "__all__", ())
                raise
            if not present:  # a field of a class (a dataclass's, a Protocol's) is a name too
                return isinstance(found, type) and any(
                    part in vars(c).get("__annotations__", {}) for c in found.__mro__
                )
            found = getattr(found, part)
        return True
    return False


def _stale_names(texts: dict[str, str]) -> list[str]:
    """```memstore.a.b``` and ```memstore.a:b``` names that no longer name a module or an object
    (the entry-point groups, ``memstore.metrics`` and the like, are names of another kind)."""
    return [
        f"{where}: {m.group(1)}"
        for where, m in _places(texts, NAMED)
        if m.group(1) not in _GROUPS and not _resolves(m.group(1))
    ]


def test_a_cited_line_past_the_end_or_of_no_file_is_stale() -> None:
    planted = {
        "a.md": "see memstore/store.py:1, run/output.py:2 and errors.py:3",
        "b.md": "see memstore/store.py:99999 and run/gone.py:1",
        "c.md": "an example memory cites src/app.py:99999, not our code",
    }
    assert _stale_lines(planted) == ["b.md:1: memstore/store.py:99999", "b.md:1: run/gone.py:1"]


def test_a_name_that_no_longer_names_anything_is_stale() -> None:
    planted = {
        "a.md": "`memstore.errors.StorageError`, `memstore.harness.records.upgrade:upgrade`, `memstore.metrics`",
        "b.md": "`memstore.harness.analysis.upgrade` and `memstore.errors.NoSuchError`",
    }
    assert _stale_names(planted) == ["b.md:1: memstore.harness.analysis.upgrade", "b.md:1: memstore.errors.NoSuchError"]


def test_every_cited_line_of_the_docs_and_docstrings_is_there() -> None:
    assert _stale_lines({**PAGES, **SOURCES}) == []


def test_every_name_the_docs_and_docstrings_give_is_there() -> None:
    assert _stale_names({**PAGES, **SOURCES}) == []
