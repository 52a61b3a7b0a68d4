"""Mining memories from a repository's history, with truth labels the verifier never computed.

At ``--from`` the miner writes memories the way a coding agent writes them: facts about
constants and versions (``MAX_RETRIES`` is ``5``), function defaults (``connect`` defaults
``timeout`` to ``30``), where a class or function is defined, a function's parameters, a
class's bases, the versions a project pins for its dependencies, each citing its real line
with the line's text and the commit. At ``--to`` it labels each one by a method independent of
the verifier: for Python, the syntax trees of both versions (is the constant still there, with
which value, at which line; is the function still there, with which defaults; where did its
module go, ``src/`` layouts included; was a name renamed: an alias ``OLD = NEW`` left behind,
or a new name doing what the old one did); for other files, constants and pins by pattern; a
file whose path is gone moved only where git's rename detection says, or where another file
holds the cited line itself. Labels:

- ``valid``: still true, at the same line of the same file;
- ``moved``: still true, at another line or in a moved file (the verifier should re-anchor);
- ``contradicted``: the value changed, or the definition is gone from a file that stayed
  (for a changed value, the value at ``--to`` is recorded: a correction must say it; for a
  name renamed, the new name);
- ``missing``: the file is gone, and no file took its place;
- ``unsupported``: an adversarial variant, a plausible fact citing a line that has nothing to do
  with it.

The ``near-miss`` and ``literal`` kinds write memories that were never true behind citations
that are (`memstore.harness.scenarios.mined_variants`). Every fact is worded in one of several
ways agents word such facts (`memstore.harness.scenarios.wordings`), chosen by its key.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from memstore.harness.scenarios.mined_facts import (
    CODE_SUFFIXES,
    PROSE_SUFFIXES,
    STOP_WORDS,
    Fact,
    Mined,
    facts_in,
    file_lines,
    mined_file,
)
from memstore.harness.scenarios.mined_renames import literal_value, renamed_as, renamed_part
from memstore.harness.scenarios.mined_variants import literal_claims, near_misses
from memstore.harness.scenarios.wordings import say
from memstore.verify import Codebase

__all__ = ["CODE_SUFFIXES", "MINED_KINDS", "PROSE_SUFFIXES", "STOP_WORDS", "Mined", "file_text", "mine", "mined_file"]

FACT_KINDS = ("constant", "default", "definition", "signature", "base", "dependency")  # read off code (mined_facts)
MINED_KINDS = (*FACT_KINDS, "adversarial", "near-miss", "literal")


def _candidates(path: str, after: set[str]) -> list[str]:
    """Where a file is at --to by its path: the same path, with or without a ``src/`` prefix."""
    options = [path, f"src/{path}", path.removeprefix("src/")]
    return [p for p in dict.fromkeys(options) if p in after][:1]


def _same_name(path: str, after: set[str]) -> str | None:
    """The one file at --to with this file's name under a folder of the same name (a package
    folder moved), or None."""
    name, parent = PurePosixPath(path).name, PurePosixPath(path).parent.name
    same = [p for p in after if PurePosixPath(p).name == name and PurePosixPath(p).parent.name == parent]
    return same[0] if len(same) == 1 else None


def _flat(text: str) -> str:
    return " ".join(text.split())


def _same(fact: Fact, now: list[Fact]) -> list[Fact]:
    return [f for f in now if f.kind == fact.kind and f.name == fact.name and f.param == fact.param]


def _label(
    fact: Fact, now: list[Fact], moved_to: str | None, texts: tuple[str, str] = ("", ""), was: Sequence[Fact] = ()
) -> tuple[str, Fact | None]:
    """The truth of what was said about ``fact`` at --to, and the fact it became there (for a
    name that is gone, what it was renamed to, if its trees show it: `_renamed_as`)."""
    if moved_to is None:
        return "missing", None
    same = _same(fact, now)
    if not same:
        # gone from a file that stayed: what it said no longer holds (renamed: said of another name now)
        return "contradicted", renamed_as(fact, now, was)
    found = same[0]
    if fact.value is not None and literal_value(found.value or "") != literal_value(fact.value):
        return "contradicted", found
    unchanged = (
        moved_to == fact.path and found.line == fact.line and " ".join(texts[0].split()) == " ".join(texts[1].split())
    )
    return ("valid" if unchanged else "moved"), found  # moved: still true, its citation to update


_SUBJECTS = {
    "constant": "{name} in {module}",
    "default": "{name} defaults",
    "signature": "{name} parameters",
    "base": "{name} base class",
    "dependency": "{name} requirement",
    "definition": "where {name} lives",
}


def _say(fact: Fact, module: str, key: str, *, fixed: bool = False) -> tuple[str, str]:
    """The subject and fact an agent would write, in one of the wordings of its kind
    (`memstore.harness.scenarios.wordings`; ``fixed``: the first)."""
    kind = fact.kind if fact.kind in _SUBJECTS else "definition"
    fields = {
        "name": fact.name,
        "value": fact.value or "",
        "path": fact.path,
        "param": fact.param or "",
        "module": module,
    }
    return _SUBJECTS[kind].format(**fields), say(kind, key, fields, fixed=fixed)


def mine(
    before: Codebase,
    after: Codebase,
    *,
    kinds: Sequence[str] = MINED_KINDS,
    limit: int = 200,
    seed: int = 0,
    adversarial_share: float = 0.1,
    balance: bool = False,
    prose: bool = False,
    fixed_wording: bool = False,
) -> list[Mined]:
    """Memories written at ``before`` and labelled at ``after`` (see the module docstring), from
    the files `mined_file` takes (code and configuration; prose too with ``prose``).

    Facts are drawn at random, the kinds in turn; with ``balance``, every fact is labelled
    and the memories kept take the truth classes in turn (a scenario wants some of each;
    the benchmark draws without it, so its classes are as the history has them)."""
    rng = random.Random(seed)
    after_paths = set(after.paths())
    facts: list[Fact] = []
    for path in sorted(before.paths()):
        if mined_file(path, prose=prose):
            facts += [f for f in facts_in(before, path) if f.kind in kinds]
    rng.shuffle(facts)
    budget = max(1, int(limit * (1 - adversarial_share))) if "adversarial" in kinds else limit
    chosen = _in_turn(facts, len(facts) if balance else budget)
    now_cache: dict[str, list[Fact]] = {}
    mined: list[Mined] = []
    for fact in sorted(chosen, key=lambda f: (f.path, f.line, f.kind, f.name, f.param or "")):
        found = _labelled(fact, before, after, after_paths, now_cache, fixed_wording)
        if found is not None:
            mined.append(found)
    labelled = mined
    if balance:
        mined = _by_truth(mined, budget)
    if "adversarial" in kinds:
        mined += _adversarial(before, after, after_paths, mined, limit - len(mined), rng)
    if "near-miss" in kinds:
        mined += near_misses(labelled, max(2, limit // 6), rng)
    if "literal" in kinds:
        mined += literal_claims(labelled, after, max(2, limit // 10), rng, fixed=fixed_wording)
    return mined


def _in_turn(facts: list[Fact], draw: int) -> list[Fact]:
    """Up to ``draw`` facts, the kinds in turn: constants and defaults carry values (the
    contradictions), definitions the moves."""
    by_kind: dict[str, list[Fact]] = {}
    for fact in facts:
        by_kind.setdefault(fact.kind, []).append(fact)
    chosen: list[Fact] = []
    while len(chosen) < draw and any(by_kind.values()):
        for kind in sorted(by_kind):
            if by_kind[kind] and len(chosen) < draw:
                chosen.append(by_kind[kind].pop())
    return chosen


def _labelled(
    fact: Fact,
    before: Codebase,
    after: Codebase,
    after_paths: set[str],
    now_cache: dict[str, list[Fact]],
    fixed: bool = False,
) -> Mined | None:
    """The memory ``fact`` makes, labelled at ``after``; None where no one truth can be given."""
    targets = _candidates(fact.path, after_paths)
    moved_to = targets[0] if targets else _renamed(fact.path, before, after)
    lines = file_lines(before, fact.path) or ()
    cited = lines[fact.line - 1] if fact.line <= len(lines) else ""
    if moved_to is None:
        # Its file is gone, and neither its path nor git says where it went: a file of its name
        # counts as where it moved only if it holds the cited line itself (a package folder
        # moved); else the file is missing, whatever other file now holds or defines it.
        other = _same_name(fact.path, after_paths)
        if other is not None and _flat(cited) in {_flat(t) for t in file_lines(after, other) or ()}:
            moved_to = other
    if moved_to is not None and moved_to not in now_cache:
        now_cache[moved_to] = facts_in(after, moved_to, cited=False, unique=False)
    now_lines = file_lines(after, moved_to) or () if moved_to else ()
    same_place = now_lines[fact.line - 1] if moved_to == fact.path and fact.line <= len(now_lines) else ""
    if len(_same(fact, now_cache.get(moved_to or "", []))) > 1:
        return None  # overloads or conditional definitions at --to: no one truth to label
    key = f"before:{fact.path}"  # what the file said at --from (which names are new at --to)
    if key not in now_cache:
        now_cache[key] = facts_in(before, fact.path, cited=False, unique=False)
    was = now_cache[key]
    truth, found = _label(fact, now_cache.get(moved_to or "", []), moved_to, (cited, same_place), was)
    renamed = truth == "contradicted" and found is not None and (found.name, found.param) != (fact.name, fact.param)
    key = _key(fact)
    subject, said = _say(fact, PurePosixPath(fact.path).stem, key, fixed=fixed)
    return Mined(
        key=key,
        kind=fact.kind,
        subject=subject,
        fact=said,
        path=fact.path,
        line=fact.line,
        snippet=cited,
        truth=truth,
        now_path=moved_to if found is not None else None,
        now_line=found.line if found is not None else None,
        old_value=renamed_part(fact) if renamed else fact.value,
        new_value=(renamed_part(found) if renamed else found.value) if truth == "contradicted" and found else None,
        sort="renamed" if renamed else "",
        param=fact.param,
        name=fact.name,
    )


def _renamed(path: str, before: Codebase, after: Codebase) -> str | None:
    """Where git's rename detection says the file went between the two versions, or None."""
    commit = getattr(before, "commit", None)
    if commit is None or not after.has_commit(commit):
        return None
    return after.rename_of(commit, path)


def _by_truth(mined: list[Mined], budget: int) -> list[Mined]:
    """At most ``budget`` of ``mined``, the truth classes taken in turn (in file order after)."""
    classes: dict[str, list[Mined]] = {}
    for item in mined:  # a changed value, read at --to, apart from a definition that is gone
        truth = "gone" if item.truth == "contradicted" and item.new_value is None else item.truth
        classes.setdefault(truth, []).append(item)
    kept: list[Mined] = []
    while len(kept) < budget and any(classes.values()):
        for truth in ("contradicted", "moved", "missing", "valid", "gone"):
            if classes.get(truth) and len(kept) < budget:
                kept.append(classes[truth].pop(0))
    return sorted(kept, key=lambda m: (m.path, m.line, m.key))


def _key(fact: Fact) -> str:
    digest = hashlib.sha256(f"{fact.kind}|{fact.path}|{fact.name}|{fact.param}".encode()).hexdigest()[:8]
    stem = re.sub(r"[^a-z0-9]+", "-", f"{fact.kind}-{fact.name}".lower()).strip("-")[:40]
    return f"{stem}-{digest}"


def _adversarial(
    before: Codebase, after: Codebase, after_paths: set[str], genuine: list[Mined], count: int, rng: random.Random
) -> list[Mined]:
    """Plausible facts citing lines that have nothing to do with them: another fact's words,
    pinned to a line of another file that shares no word with it."""
    found: list[Mined] = []
    sources = [m for m in genuine if m.kind in {"constant", "default"}]
    paths = sorted({m.path for m in genuine})
    for source in rng.sample(sources, min(count, len(sources))):
        others = [p for p in paths if p != source.path]
        if not others:
            continue
        path = rng.choice(others)
        lines = file_lines(before, path) or ()
        words = set(re.findall(r"[a-z]{3,}", f"{source.subject} {source.fact}".lower()))
        plain = [
            (n, t)
            for n, t in enumerate(lines, 1)
            if len(t.strip()) > 12 and not set(re.findall(r"[a-z]{3,}", t.lower())) & words
        ]
        if not plain:
            continue
        line, text = rng.choice(plain)
        # a line of a file that is gone (no path, no rename of git's keeps it): missing, whatever it said
        gone = not _candidates(path, after_paths) and _renamed(path, before, after) is None
        found.append(
            Mined(
                key=f"adversarial-{source.key}",
                kind="adversarial",
                subject=source.subject,
                fact=source.fact,
                path=path,
                line=line,
                snippet=text,
                truth="missing" if gone else "unsupported",
                old_value=source.old_value,
            )
        )
    return found


def file_text(codebase: Codebase, path: str) -> str | None:
    """A file's text as a scenario writes it (None when it cannot be read)."""
    lines = file_lines(codebase, path)
    return None if lines is None else "\n".join(lines) + "\n"
