"""The hand-written verdict benchmark: memories people wrote by reading real code, and their labels.

Run:  python evals/bench/handwritten.py prepare tqdm --out /tmp/hw   (both releases unpacked, and a git
                                                                    repository with tags old and new)
      python evals/bench/handwritten.py check tqdm                  (the memories are well formed and
                                                                    their citations stand at `old`)
      python evals/bench/handwritten.py stats                       (the mix of classes, project by project)

`evals/bench/memories/projects.toml` names each project, its registry (PyPI or npm), the release a
memory was written at (`old`) and the release it is judged at (`new`). `<project>.jsonl` holds one
memory a line:

    {"id": "tqdm-001", "class": "changed",
     "subject": "...", "facts": ["wording one", "wording two", "wording three"],
     "citations": ["tqdm/std.py:245", "tqdm/std.py:250-252"],
     "current": ["value now"], "stale": ["value then"], "moved_to": [], "why": "..."}

`class` is what a person reading both releases found (the label follows from it, `LABELS`); the three
facts are the same claim in three wordings (one label); `current` holds what a correction must state
(the values the code says now), `stale` what it must no longer state; `moved_to` where each citation's
lines stand at `new` (class `moved`). Nothing here was written by a template or by memstore code, and
none of it is read by the verifier: the scorer (eval_verdicts.py) reads it after the verdicts.

The check reads files and lines only; it never runs the verifier, so a person writing memories for the
hold-out sees nothing of how they are judged.
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import subprocess
import sys
import tarfile
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from memstore import Citation
from memstore.errors import ValidationError
from memstore.verify.history import BuiltRepository, HistoryBuilder

HERE = Path(__file__).parent / "memories"
CACHE = Path.home() / ".cache" / "memstore-eval" / "archives"
MAX_FILE = 1 << 20  # as the verifier: a larger file is never read

# A memory's class, as a person reading both releases found it, and the label (truth) it carries.
LABELS = {
    "valid": "valid",  # the cited lines stand where they stood and the fact still holds
    "moved": "moved",  # the fact still holds; its lines stand elsewhere (another line or file)
    "edited": "moved",  # the fact still holds; a cited line was edited without touching the claim
    "changed": "contradicted",  # true when written; a change made it false
    "gone": "contradicted",  # what the fact is about was removed from a file that remains
    "near miss": "contradicted",  # never quite true: a value near the code's (one off, a flag turned over)
    "claim not made": "unsupported",  # the cited code does not do what the fact says of it
    "unrelated citation": "unsupported",  # the citation points at code the fact is not about
    "deleted file": "missing",  # the cited file is gone at `new`, and nothing carries it
}
# Shares the issue asks of the whole benchmark (at least).
MIX = {
    "changed": 0.25,
    "moved": 0.15,
    "near miss": 0.10,
    ("unrelated citation", "claim not made"): 0.10,
    "deleted file": 0.05,
}


@dataclass(frozen=True)
class Project:
    name: str
    registry: str  # "pypi" or "npm"
    package: str
    old: str
    new: str
    split: str  # "tune" or "holdout"


@dataclass(frozen=True)
class HandMemory:
    """One hand-written memory and its label (grading data: read by the scorer only)."""

    project: str
    id: str
    kind: str  # a key of LABELS
    subject: str
    facts: tuple[str, ...]
    citations: tuple[Citation, ...]
    current: tuple[str, ...]
    stale: tuple[str, ...]
    moved_to: tuple[Citation, ...]
    why: str

    @property
    def label(self) -> str:
        return LABELS[self.kind]


def projects() -> dict[str, Project]:
    data = tomllib.loads((HERE / "projects.toml").read_text())
    return {name: Project(name=name, **fields) for name, fields in data.items()}


def download(project: Project, version: str, cache: Path = CACHE) -> Path:
    """The release's source archive from its registry (cached)."""
    folder = cache / project.registry
    folder.mkdir(parents=True, exist_ok=True)
    stem = project.package.lower().replace("_", "-")
    found = [p for p in folder.iterdir() if _archive_of(p.name, stem, version)]
    if not found:
        if project.registry == "npm":
            argv = ["npm", "pack", "--silent", f"{project.package}@{version}", "--pack-destination", str(folder)]
        else:
            argv = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                    f"{project.package}=={version}", "-d", str(folder)]  # fmt: skip
        subprocess.run(argv, check=True, capture_output=True)
        found = [p for p in folder.iterdir() if _archive_of(p.name, stem, version)]
    if not found:
        raise SystemExit(f"no source archive of {project.package} {version} was downloaded")
    return found[0]


def _archive_of(filename: str, stem: str, version: str) -> bool:
    name = filename.lower().replace("_", "-")
    return name in {f"{stem}-{version}.tar.gz", f"{stem}-{version}.tgz", f"{stem}-{version}.zip"}


def release_files(archive: Path) -> dict[str, bytes]:
    """Every text file of a source archive, its top folder stripped (paths as released)."""
    files: dict[str, bytes] = {}
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            parts = member.name.split("/", 1)
            if not member.isfile() or len(parts) != 2 or member.size > MAX_FILE:
                continue
            path = parts[1]
            if path.startswith(".git/") or "/.git/" in path:
                continue
            handle = tar.extractfile(member)
            data = handle.read() if handle is not None else b""
            if b"\0" not in data[:8192]:
                files[path] = data
    return files


def build(project: Project, where: Path, *, cache: Path = CACHE, bare: bool = True) -> BuiltRepository:
    """A git repository holding release `old`, then release `new` on top (tags old and new)."""
    b = HistoryBuilder()
    previous: set[str] = set()
    for tag, version in (("old", project.old), ("new", project.new)):
        files = release_files(download(project, version, cache))
        for path in sorted(previous - set(files)):
            b.remove(path)
        for path, data in sorted(files.items()):
            b.write(path, data)
        previous = set(files)
        b.commit(f"{project.package} {version}", label=tag)
        b.tag(tag)
    return b.build(where, bare=bare)


def load(project: Project) -> list[HandMemory]:
    """The project's memories; a malformed line stops with FILE:LINE and what is wrong."""
    path = HERE / f"{project.name}.jsonl"
    memories: list[HandMemory] = []
    if not path.exists():
        return memories
    seen: set[str] = set()
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            memory = _memory(project.name, json.loads(line))
        except (ValueError, KeyError, TypeError, ValidationError) as exc:
            raise SystemExit(f"{path}:{number}: {exc}") from exc
        if memory.id in seen:
            raise SystemExit(f"{path}:{number}: id {memory.id!r} is used twice")
        seen.add(memory.id)
        memories.append(memory)
    return memories


def _memory(project: str, row: dict[str, object]) -> HandMemory:
    kind = str(row["class"])
    if kind not in LABELS:
        raise ValueError(f"class {kind!r} is not one of {', '.join(LABELS)}")
    facts = tuple(str(f).strip() for f in row["facts"])  # type: ignore[attr-defined]
    if len(facts) != 3 or len(set(facts)) != 3 or not all(facts):
        raise ValueError("facts must be three different wordings of the same claim")
    citations = tuple(Citation.parse(str(c)) for c in row["citations"])  # type: ignore[attr-defined]
    if not citations:
        raise ValueError("a memory needs at least one citation")
    moved_to = tuple(Citation.parse(str(c)) for c in row.get("moved_to") or [])  # type: ignore[attr-defined]
    if kind in {"moved", "edited"} and len(moved_to) != len(citations):
        raise ValueError(f"a {kind} memory gives where each citation stands at `new` (moved_to)")
    subject = str(row["subject"]).strip()
    if not subject or len(subject) > 200:
        raise ValueError("subject must be 1 to 200 characters")
    return HandMemory(
        project=project, id=str(row["id"]), kind=kind, subject=subject, facts=facts, citations=citations,
        current=tuple(str(v) for v in row.get("current") or []),  # type: ignore[attr-defined]
        stale=tuple(str(v) for v in row.get("stale") or []),  # type: ignore[attr-defined]
        moved_to=moved_to, why=str(row.get("why", "")),
    )  # fmt: skip


def _lines(files: dict[str, bytes], path: str) -> list[str] | None:
    data = files.get(path)
    return None if data is None else data.decode("utf-8", "replace").splitlines()


def _span(lines: list[str], c: Citation) -> str:
    return " ".join(" ".join(lines[i - 1].split()) for i in range(c.line, (c.end_line or c.line) + 1))


def check(project: Project, cache: Path = CACHE) -> list[str]:
    """What is wrong with a project's memories, read against the files of both releases."""
    old = release_files(download(project, project.old, cache))
    new = release_files(download(project, project.new, cache))
    problems: list[str] = []
    for m in load(project):
        where = f"{m.id} ({m.kind})"
        for c in m.citations:
            lines = _lines(old, c.path)
            if lines is None:
                problems.append(f"{where}: {c.path} is not in release {project.old}")
            elif (c.end_line or c.line) > len(lines):
                problems.append(f"{where}: {c} is past the end of {c.path} ({len(lines)} lines) at {project.old}")
            elif not _span(lines, c).strip():
                problems.append(f"{where}: {c} cites only blank lines")
        if m.kind == "deleted file" and all(c.path in new for c in m.citations):
            problems.append(f"{where}: every cited file still exists at {project.new}")
        if m.kind in {"changed", "near miss"} and not m.stale:
            problems.append(f"{where}: say which stated values are wrong now (stale)")
        for value in m.current:
            if not any(" ".join(value.split()) in " ".join(d.decode("utf-8", "replace").split()) for d in new.values()):
                problems.append(f"{where}: current value {value!r} is not written in any file at {project.new}")
        if m.kind == "valid":
            for c in m.citations:
                before, after = _lines(old, c.path), _lines(new, c.path)
                if before and after and (c.end_line or c.line) <= len(after) and _span(before, c) != _span(after, c):
                    problems.append(f"{where}: {c} reads differently at {project.new}: moved or changed, not valid")
        if m.kind == "edited":
            for to in m.moved_to:
                after = _lines(new, to.path)
                if after is None or (to.end_line or to.line) > len(after):
                    problems.append(f"{where}: moved_to {to} is not in release {project.new}")
        if m.kind == "moved":
            for c, to in zip(m.citations, m.moved_to, strict=True):
                before, after = _lines(old, c.path), _lines(new, to.path)
                if before is None or after is None or (to.end_line or to.line) > len(after):
                    problems.append(f"{where}: moved_to {to} is not in release {project.new}")
                elif _span(before, c) != _span(after, to):
                    problems.append(f"{where}: {to} at {project.new} does not hold the text of {c}")
    return problems


def prepare(project: Project, out: Path, cache: Path = CACHE) -> Path:
    """Both releases unpacked under OUT/<project>/{old,new}, and a git repository (tags old, new)."""
    root = out / project.name
    for tag, version in (("old", project.old), ("new", project.new)):
        target = root / tag
        if target.exists():
            shutil.rmtree(target)
        for path, data in release_files(download(project, version, cache)).items():
            (target / path).parent.mkdir(parents=True, exist_ok=True)
            (target / path).write_bytes(data)
    if (root / "repo").exists():
        shutil.rmtree(root / "repo")
    build(project, root / "repo", cache=cache, bare=False)
    return root


def stats(chosen: dict[str, Project]) -> str:
    out = io.StringIO()
    total: Counter[str] = Counter()
    for project in chosen.values():
        counts = Counter(m.kind for m in load(project))
        total += counts
        out.write(f"{project.name:<14} {project.split:<8} {sum(counts.values()):>4}  "
                  + ", ".join(f"{k} {counts[k]}" for k in LABELS if counts[k]) + "\n")  # fmt: skip
    n = sum(total.values()) or 1
    out.write(f"{'all':<23} {sum(total.values()):>4}\n")
    for kinds, share in MIX.items():
        names = kinds if isinstance(kinds, tuple) else (kinds,)
        got = sum(total[k] for k in names) / n
        out.write(f"  {' or '.join(names):<34} {got:6.1%}  (at least {share:.0%})\n")
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["prepare", "check", "stats"])
    parser.add_argument("project", nargs="?", default=None, help="a project of memories/projects.toml (default: all)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/hw"))
    parser.add_argument("--cache", type=Path, default=CACHE)
    args = parser.parse_args(argv)
    known = projects()
    if args.project is not None and args.project not in known:
        parser.error(f"unknown project {args.project!r}; known: {', '.join(known)}")
    chosen = {args.project: known[args.project]} if args.project else known
    if args.command == "stats":
        print(stats(chosen), end="")
        return 0
    failed = 0
    for project in chosen.values():
        if args.command == "prepare":
            print(f"{prepare(project, args.out, args.cache)}: old = {project.old}, new = {project.new}")
            continue
        problems = check(project, args.cache)
        for problem in problems:
            print(f"{project.name}: {problem}")
        print(f"{project.name}: {len(load(project))} memories, {len(problems)} problems")
        failed += bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
