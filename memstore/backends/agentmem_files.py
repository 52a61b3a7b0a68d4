"""agent-mem's files: the memory directory a repository is keyed to, the ``MEMORY.md`` index
injected at session start (with the seed's caps), and a memory as a topic file a person can
read and edit, with what they need not see in a trailing comment (see `memstore.backends.agentmem`)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from memstore.model import Citation, Kind, Memory, Status, Surface, validate_repo
from memstore.verify import repository_root

__all__ = [
    "INDEX",
    "INDEX_MAX_BYTES",
    "INDEX_MAX_LINES",
    "PREVIEW_MAX_CHARS",
    "TOPIC_MAX_ENTRIES",
    "encode_key",
    "parse_topic",
    "render_index",
    "render_topic",
    "repo_key",
    "resolve_memdir",
    "slug",
    "strip_comments",
    "visible_text",
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


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:48] or "memory"


def repo_key(repo: str) -> str:
    """The directory key of a repository ``owner/name``: ``-owner-name``, with a ``-`` inside
    either part written ``%2D`` so that no two repositories share a key (``a-b/c`` and ``a/b-c``
    would both be ``-a-b-c`` as paths). Repositories without a ``-`` keep agent-mem's path key."""
    owner, _, name = validate_repo(repo).partition("/")
    return f"-{owner.replace('-', '%2D')}-{name.replace('-', '%2D')}"


def visible_text(text: str) -> str:
    """Text as written into the readable part of a topic file: never a comment opener, which
    would hide what follows from `strip_comments` (and from a reader of the rendered Markdown)."""
    return text.replace("<!--", "&lt;!--")


def _from_visible(text: str) -> str:
    return text.replace("&lt;!--", "<!--")


def _body(subject: str, fact: str, reason: str, citations: tuple[Citation, ...]) -> str:
    """The readable part of a topic file."""
    lines = [f"# {visible_text(' '.join(subject.split()))}", "", visible_text(fact), ""]
    if reason:
        lines += [f"Why: {visible_text(reason)}", ""]
    if citations:
        lines += ["Citations:", *(f"- {c}" for c in citations), ""]
    return "\n".join(lines) + "\n"


def _meta_json(meta: dict[str, Any]) -> str:
    # "<" and ">" escaped (valid JSON): the comment holding it can never be closed or opened early.
    return json.dumps(meta, ensure_ascii=False, sort_keys=True).replace("<", "\\u003c").replace(">", "\\u003e")


def render_topic(memory: Memory) -> str:
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


def parse_topic(text: str, repo: str) -> Memory | None:
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
