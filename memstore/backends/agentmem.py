"""``agentmem:///base/dir``: memories kept as agent-mem keeps them, in plain Markdown.

The layout of the agent-mem plugin (modelled on Claude Code's auto memory): a base
directory (``AGENT_MEM_DIR``, default ``~/.agent-mem``) holds one directory per repository,
keyed by the repository root's absolute path with ``/`` replaced by ``-``
(`encode_key`); worktrees of one clone share a key; outside a repository the working
directory is encoded the same way; ``AGENT_MEM_KEY`` overrides the key (`resolve_memdir`).
In it, ``MEMORY.md`` is the concise index and ``<topic>.md`` files hold the detail.
`render_index` builds the context injected at session start, with the seed's caps.
Resolving and reading never create a directory; the first write does.

As a `MemoryStore`, a repository ``owner/name`` is keyed as the path ``/owner/name``
(``-owner-name``). Each memory is a topic file a person can read and edit::

    # API version synchronization

    API version must match between client SDK, server routes, and documentation.

    Why: If the version drifts, the integration fails.

    Citations:
    - src/client/sdk/constants.ts:12
    - server/routes/api.go:8

    <!-- memstore {"id": "mem_...", "kind": "fact", "author": "ana", ...} -->

The trailing comment holds what a person need not see (ids, dates, status, each citation's
recorded text and commit); comments are stripped from what is injected. What the format
cannot express, it does not pretend to: there are no users in a directory of Markdown, so
no permissions between users and no private preferences (anyone who can read the files
sees every memory); agent-mem keeps a memory until someone edits it, so there is no expiry.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
import threading
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from memstore.access import Actor
from memstore.backends import StoreOptions
from memstore.backends.base import check_actor, check_limit, check_surface
from memstore.clock import Clock
from memstore.errors import Conflict, NotFound, ValidationError
from memstore.ids import IdFactory
from memstore.model import (
    MAX_REASON_CHARS,
    Citation,
    Kind,
    Memory,
    MemoryDraft,
    Status,
    Surface,
    check_text,
    validate_repo,
)
from memstore.verify.git import repository_root

__all__ = [
    "INDEX_MAX_BYTES",
    "INDEX_MAX_LINES",
    "PREVIEW_MAX_CHARS",
    "TOPIC_MAX_ENTRIES",
    "AgentMemStore",
    "encode_key",
    "open_agentmem",
    "render_index",
    "repo_key",
    "resolve_memdir",
    "strip_comments",
]

INDEX_MAX_LINES = 200
INDEX_MAX_BYTES = 25 * 1024
TOPIC_MAX_ENTRIES = 50
PREVIEW_MAX_CHARS = 100
INDEX = "MEMORY.md"
_FENCE = re.compile(r"^\s*(```|~~~)")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_META_LINE = re.compile(r"<!--\s*memstore\s+(\{.*\})\s*-->")


def encode_key(path: str | Path) -> str:
    """The directory key of an absolute path: every ``/`` becomes ``-`` (``/Users/foo/api`` -> ``-Users-foo-api``)."""
    return os.path.abspath(os.fspath(path)).replace("/", "-")


def resolve_memdir(cwd: str | Path, env: Mapping[str, str]) -> Path:
    """The memory directory for a session started in ``cwd`` (never created here).

    The base is ``AGENT_MEM_DIR`` or ``~/.agent-mem``; the key is ``AGENT_MEM_KEY`` if set,
    else the repository root that ``cwd`` belongs to (shared by its worktrees), else ``cwd``.
    """
    home = env.get("HOME") or str(Path.home())
    base = Path(env["AGENT_MEM_DIR"]) if env.get("AGENT_MEM_DIR") else Path(home) / ".agent-mem"
    key = env.get("AGENT_MEM_KEY")
    if not key:
        root = repository_root(cwd)
        key = encode_key(root if root is not None else cwd)
    return base / key


def strip_comments(text: str) -> str:
    """Remove ``<!-- ... -->`` comments, except inside fenced code blocks; a line left empty by it goes too."""
    out: list[str] = []
    block: list[str] = []
    fenced = False

    def flush() -> None:
        if block:
            joined = "".join(block)
            stripped = _COMMENT.sub("\x00", joined)
            for line in stripped.splitlines(keepends=True):
                if "\x00" in line and not line.replace("\x00", "").strip():
                    continue  # the line held only a comment
                out.append(line.replace("\x00", ""))
            block.clear()

    for line in text.splitlines(keepends=True):
        if _FENCE.match(line):
            if not fenced:
                flush()
            fenced = not fenced
            out.append(line)
        elif fenced:
            out.append(line)
        else:
            block.append(line)
    flush()
    return "".join(out)


def _cap(text: str) -> tuple[str, bool]:
    """The first 200 lines or 25 KB of ``text``, whichever ends first; and whether anything was cut."""
    lines = text.splitlines(keepends=True)
    capped = "".join(lines[:INDEX_MAX_LINES])
    cut = len(lines) > INDEX_MAX_LINES
    data = capped.encode("utf-8")
    if len(data) > INDEX_MAX_BYTES:
        capped = data[:INDEX_MAX_BYTES].decode("utf-8", errors="ignore")
        cut = True
    return capped, cut


def _preview(text: str) -> str:
    for line in strip_comments(text).splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line if len(line) <= PREVIEW_MAX_CHARS else line[: PREVIEW_MAX_CHARS - 1] + "…"
    return "(empty)"


def render_index(memdir: str | Path) -> str:
    """The context injected at session start: the memory path, MEMORY.md (comments stripped,
    capped at 200 lines or 25 KB), and the other topic files with one-line previews (at most
    50, then "…N more"). Reading only: a missing directory is reported, not created."""
    memdir = Path(memdir).absolute()
    out = [f"Memory directory: {memdir}"]
    if not memdir.is_dir():
        out.append("(it does not exist yet; it is created when the first memory is saved)")
        return "\n".join(out) + "\n"
    index = memdir / INDEX
    out.append("")
    if index.is_file():
        text, cut = _cap(strip_comments(index.read_text(encoding="utf-8", errors="replace")))
        out += [f"## {INDEX}", "", text.rstrip("\n")]
        if cut:
            out.append(f"(truncated: {INDEX} is longer than {INDEX_MAX_LINES} lines or {INDEX_MAX_BYTES // 1024} KB)")
    else:
        out += [f"## {INDEX}", "", "(no MEMORY.md yet)"]
    topics = sorted(p for p in memdir.glob("*.md") if p.name != INDEX and p.is_file())
    out += ["", "## Topic files", ""]
    for topic in topics[:TOPIC_MAX_ENTRIES]:
        out.append(f"- {topic.name}: {_preview(topic.read_text(encoding='utf-8', errors='replace'))}")
    if len(topics) > TOPIC_MAX_ENTRIES:
        out.append(f"- …{len(topics) - TOPIC_MAX_ENTRIES} more")
    if not topics:
        out.append("(none)")
    return "\n".join(out) + "\n"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:48] or "memory"


def repo_key(repo: str) -> str:
    """The directory key of a repository ``owner/name``: ``-owner-name``, with a ``-`` inside
    either part written ``%2D`` so that no two repositories share a key (``a-b/c`` and ``a/b-c``
    would both be ``-a-b-c`` as paths). Repositories without a ``-`` keep agent-mem's path key."""
    owner, _, name = validate_repo(repo).partition("/")
    return f"-{owner.replace('-', '%2D')}-{name.replace('-', '%2D')}"


def _visible_text(text: str) -> str:
    """Text as written into the readable part of a topic file: never a comment opener, which
    would hide what follows from `strip_comments` (and from a reader of the rendered Markdown)."""
    return text.replace("<!--", "&lt;!--")


def _from_visible(text: str) -> str:
    return text.replace("&lt;!--", "<!--")


def _body(subject: str, fact: str, reason: str, citations: tuple[Citation, ...]) -> str:
    """The readable part of a topic file."""
    lines = [f"# {_visible_text(' '.join(subject.split()))}", "", _visible_text(fact), ""]
    if reason:
        lines += [f"Why: {_visible_text(reason)}", ""]
    if citations:
        lines += ["Citations:", *(f"- {c}" for c in citations), ""]
    return "\n".join(lines) + "\n"


def _meta_json(meta: dict[str, Any]) -> str:
    # "<" and ">" escaped (valid JSON): the comment holding it can never be closed or opened early.
    return json.dumps(meta, ensure_ascii=False, sort_keys=True).replace("<", "\\u003c").replace(">", "\\u003e")


def _render_topic(memory: Memory) -> str:
    meta: dict[str, Any] = {
        "id": memory.id,
        "repo": memory.repo,
        "kind": memory.kind.value,
        "author": memory.author,
        "surface": memory.surface.value,
        "created": memory.created_at.isoformat(),
        "refreshed": memory.refreshed_at.isoformat(),
        "status": memory.status.value,
        "supersedes": memory.supersedes,
        "retired_reason": memory.retired_reason,
        "citations": [c.to_dict() for c in memory.citations],
        # The fields exactly as stored: the readable part above is for people, and is only
        # parsed when a person has edited it.
        "subject": memory.subject,
        "fact": memory.fact,
        "reason": memory.reason,
    }
    body = _body(memory.subject, memory.fact, memory.reason, memory.citations)
    return f"{body}<!-- memstore {_meta_json(meta)} -->\n"


def _split_topic(text: str) -> tuple[str, dict[str, Any]] | None:
    """The readable body and the metadata of a file memstore wrote; None for any other file.

    Only the file's last line is read as metadata: a comment inside a fact cannot pass for it.
    """
    body, _, last = text.rstrip("\n").rpartition("\n")
    found = _META_LINE.fullmatch(last)
    if found is None:
        return None
    try:
        meta = json.loads(found.group(1))
    except ValueError as exc:
        raise ValueError(f"its memstore line is not JSON: {exc}") from exc
    if not isinstance(meta, dict):
        raise ValueError("its memstore line is not a JSON object")
    return body + "\n" if body else "", meta


def _sections(body: str) -> tuple[str, str, str, list[str]]:
    """Subject, fact, reason and citation strings of a body a person may have edited."""
    lines = body.splitlines()
    subject = next((line[2:].strip() for line in lines if line.startswith("# ")), "")
    after = lines[next((i + 1 for i, line in enumerate(lines) if line.startswith("# ")), 0) :]
    fact_lines: list[str] = []
    reason_lines: list[str] = []
    cited: list[str] = []
    section = "fact"
    for line in after:
        if line.startswith("Why:") and section == "fact":
            section, line = "reason", line[len("Why:") :].lstrip()
        elif line.strip() == "Citations:":
            section = "citations"
            continue
        if section == "fact":
            fact_lines.append(line)
        elif section == "reason":
            reason_lines.append(line)
        elif line.startswith("- "):
            cited.append(line[2:].strip())
    return (
        _from_visible(subject),
        _from_visible("\n".join(fact_lines).strip()),
        _from_visible("\n".join(reason_lines).strip()),
        cited,
    )


def _parse_topic(text: str, repo: str) -> Memory | None:
    """A topic file back as a memory; None for a Markdown file memstore did not write.

    A file as memstore wrote it gives back exactly what was stored; once a person has edited
    its readable part, that part wins (hand edits count).

    Raises:
        ValueError: for a memstore file whose metadata or edited text cannot be read.
    """
    split = _split_topic(text)
    if split is None:
        return None
    body, meta = split
    recorded = tuple(Citation.from_dict(c) for c in meta.get("citations", []))
    exact = {"subject", "fact", "reason"} <= meta.keys() and body == _body(
        meta["subject"], meta["fact"], meta["reason"], recorded
    )
    if exact:
        subject, fact, reason, citations = meta["subject"], meta["fact"], meta["reason"], recorded
    else:
        subject, fact, reason, cited_text = _sections(body)
        by_text = {str(c): c for c in recorded}
        citations = tuple(by_text[t] if t in by_text else Citation.parse(t) for t in cited_text)
    return Memory(
        id=meta["id"],
        repo=meta.get("repo", repo),
        kind=Kind(meta["kind"]),
        subject=subject,
        fact=fact,
        citations=citations,
        reason=reason,
        author=meta["author"],
        surface=Surface(meta["surface"]),
        created_at=datetime.fromisoformat(meta["created"]),
        refreshed_at=datetime.fromisoformat(meta["refreshed"]),
        supersedes=meta.get("supersedes"),
        status=Status(meta["status"]),
        retired_reason=meta.get("retired_reason"),
    )


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)  # the first write creates the directory, nothing before
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".md")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)  # readers never see half a file
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)  # a failed write leaves nothing behind
        raise


class AgentMemStore:
    """A `MemoryStore` in agent-mem's layout (see the module docstring for what it cannot express)."""

    capabilities: frozenset[str] = frozenset({"delete", "history", "retire", "supersede"})

    def __init__(self, base: Path, options: StoreOptions) -> None:
        self.base = base
        self.clock: Clock = options.clock
        self.ids: IdFactory = options.ids
        self._lock = threading.Lock()
        # Parsed topic files, re-read only when a file's size or modification time changes (hand edits count).
        self._parsed: dict[Path, tuple[tuple[int, int], Memory | None]] = {}
        self._where: dict[str, Path] = {}  # memory id -> its topic file
        self.unreadable: dict[Path, str] = {}  # memstore files a hand edit left unreadable, and why

    def __repr__(self) -> str:
        return f"AgentMemStore({str(self.base)!r})"

    def _read(self, topic: Path, repo: str) -> Memory | None:
        stat = topic.stat()
        stamp = (stat.st_mtime_ns, stat.st_size)
        cached = self._parsed.get(topic)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        try:
            memory = _parse_topic(topic.read_text(encoding="utf-8"), repo)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            # One file a person broke by hand must not take every memory of the repository with it:
            # it is set aside (and listed in ``unreadable``), never rewritten.
            self.unreadable[topic] = f"{type(exc).__name__}: {exc}"
            memory = None
        else:
            self.unreadable.pop(topic, None)
        self._parsed[topic] = (stamp, memory)
        if memory is not None:
            self._where[memory.id] = topic
        return memory

    def memdir(self, repo: str) -> Path:
        """The directory of ``repo``'s memories (see `repo_key`)."""
        return self.base / repo_key(repo)

    def _all(self, repo: str) -> dict[str, tuple[Path, Memory]]:
        memdir = self.memdir(repo)
        found: dict[str, tuple[Path, Memory]] = {}
        if not memdir.is_dir():
            return found
        for topic in sorted(memdir.glob("*.md")):
            if topic.name == INDEX:
                continue
            memory = self._read(topic, repo)
            if memory is not None and memory.repo == repo:  # a directory holds one repository's memories
                found[memory.id] = (topic, memory)
        return found

    def _reindex(self, repo: str) -> None:
        found = [(p, m) for p, m in self._all(repo).values() if m.status is Status.ACTIVE]
        found.sort(key=lambda pm: (pm[1].refreshed_at, pm[1].created_at, pm[1].id), reverse=True)
        lines = [f"# Memory for {repo}", "", "<!-- Written by memstore: one line per memory, newest first. -->", ""]
        for path, m in found:
            summary = _visible_text(" ".join(m.fact.split()))
            lines.append(f"- [{_visible_text(' '.join(m.subject.split()))}]({path.name}): {summary[:150]}")
        _write(self.memdir(repo) / INDEX, "\n".join(lines) + "\n")

    def _find(self, memory_id: str) -> tuple[str, Path, Memory]:
        if not isinstance(memory_id, str) or not memory_id or not memory_id.isascii() or len(memory_id) > 200:
            raise NotFound(str(memory_id)[:200])
        known = self._where.get(memory_id)
        if known is not None and known.is_file():
            memory = self._read(known, "")
            if memory is not None and memory.id == memory_id:
                return memory.repo, known, memory
        if self.base.is_dir():  # not seen yet (written by another process, or by hand)
            for memdir in sorted(p for p in self.base.iterdir() if p.is_dir()):
                for topic in memdir.glob("*.md"):
                    if topic.name != INDEX and memory_id in topic.read_text(encoding="utf-8", errors="replace"):
                        memory = self._read(topic, "")
                        if memory is not None and memory.id == memory_id:
                            return memory.repo, topic, memory
        raise NotFound(memory_id)

    # -- the protocol -------------------------------------------------------------------

    def store(self, draft: MemoryDraft, *, actor: Actor, surface: Surface, supersedes: str | None = None) -> Memory:
        if not isinstance(draft, MemoryDraft):
            raise ValidationError("draft", f"must be a MemoryDraft, got {type(draft).__name__}")
        actor, surface = check_actor(actor), check_surface(surface)
        draft = draft.validated()
        with self._lock:
            now = self.clock.now()
            memory = Memory.from_draft(
                draft, memory_id=self.ids(now), author=actor.user, surface=surface, now=now, supersedes=supersedes
            )
            if supersedes is not None:
                repo, path, old = self._find(supersedes)
                if repo != draft.repo:
                    raise ValidationError(
                        "repo", f"a correction stays in the repository of the memory it corrects ({repo})"
                    )
                if old.kind is not memory.kind:
                    raise ValidationError(
                        "kind", f"a correction keeps the kind of the memory it corrects ({old.kind.value})"
                    )
                if old.status is not Status.ACTIVE:
                    raise Conflict(f"cannot correct memory {old.id!r}: it is {old.status.value}")
                _write(path, _render_topic(_with(old, status=Status.SUPERSEDED)))
            _write(self.memdir(draft.repo) / f"{_slug(draft.subject)}-{memory.id.lower()}.md", _render_topic(memory))
            self._reindex(draft.repo)
        return memory

    def recent(self, repo: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        check_limit(limit)
        check_actor(actor)
        with self._lock:
            active = [m for _, m in self._all(repo).values() if m.status is Status.ACTIVE]
        active.sort(key=lambda m: (m.refreshed_at, m.created_at, m.id), reverse=True)
        return active[:limit]

    def get(self, memory_id: str, *, actor: Actor) -> Memory:
        with self._lock:
            return self._find(memory_id)[2]

    def refresh(self, memory_id: str, *, actor: Actor) -> Memory:
        with self._lock:
            repo, path, memory = self._find(memory_id)
            if memory.status is not Status.ACTIVE:
                raise Conflict(f"cannot refresh memory {memory_id!r}: it is {memory.status.value}")
            memory = _with(memory, refreshed_at=max(self.clock.now(), memory.refreshed_at))
            _write(path, _render_topic(memory))
            self._reindex(repo)
        return memory

    def retire(self, memory_id: str, *, actor: Actor, reason: str) -> None:
        check_text(reason, "reason", MAX_REASON_CHARS, required=False)
        with self._lock:
            repo, path, memory = self._find(memory_id)
            if memory.status is not Status.ACTIVE:
                raise Conflict(f"cannot retire memory {memory_id!r}: it is {memory.status.value}")
            _write(path, _render_topic(_with(memory, status=Status.RETIRED, retired_reason=reason)))
            self._reindex(repo)

    def delete(self, memory_id: str, *, actor: Actor) -> None:
        with self._lock:
            repo, _, _ = self._find(memory_id)
            chain = {m.id for m in self._chain(repo, memory_id)}
            for path, memory in self._all(repo).values():
                if memory.id in chain:
                    path.unlink()
            self._reindex(repo)

    def _chain(self, repo: str, memory_id: str) -> list[Memory]:
        memories = {m.id: m for _, m in self._all(repo).values()}
        root = memory_id
        while memories[root].supersedes in memories:
            root = memories[root].supersedes  # type: ignore[assignment]
        chain, current = [memories[root]], root
        while True:
            nxt = next((m for m in memories.values() if m.supersedes == current), None)
            if nxt is None:
                return chain
            chain.append(nxt)
            current = nxt.id

    def history(self, memory_id: str, *, actor: Actor) -> list[Memory]:
        with self._lock:
            repo, _, _ = self._find(memory_id)
            return self._chain(repo, memory_id)

    def sweep(self) -> int:
        return 0  # agent-mem keeps a memory until someone edits it: there is no expiry to sweep


def _with(memory: Memory, **changes: Any) -> Memory:
    return Memory(**{**memory.__dict__, **changes})


def open_agentmem(uri: str, options: StoreOptions) -> AgentMemStore:
    """Factory for ``agentmem:///base/dir`` (``agentmem://`` alone: ``AGENT_MEM_DIR`` or ``~/.agent-mem``)."""
    rest = uri.split(":", 1)[1]
    path = rest[2:] if rest.startswith("//") else rest
    if path.startswith("/"):
        path = "/" + path.lstrip("/")
    if not path:
        path = os.environ.get("AGENT_MEM_DIR") or str(Path.home() / ".agent-mem")
    return AgentMemStore(Path(path), options)
