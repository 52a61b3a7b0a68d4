"""Verdicts on the hand-written benchmark (`handwritten.py`), scored against its labels.

Each memory is stored as an agent's `store_memory` would store it at release `old` (each citation
anchored: its text and the commit recorded), once per wording, and verified at release `new`. The
labels (class, current and stale values, where moved lines stand) are read here, after the verdicts.

  accuracy             the verdict is the one the label calls for (valid -> VALID, moved and
                       edited -> REANCHORED, contradicted -> CONTRADICTED, unsupported ->
                       UNSUPPORTED, missing -> MISSING), over every wording;
  false invalidation   a still-true memory judged unusable;   missed bad   a bad one judged usable;
  corrected value      a contradicted memory with a current value: the correction states every
                       current value and none of the stale ones;
  paraphrase agreement the memories whose three wordings get one verdict;
  citation accuracy    moved and edited memories whose re-anchored citations stand where the label
                       says (the first line of each).
"""

from __future__ import annotations

import re
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from handwritten import LABELS, HandMemory, Project, build, load

from memstore import Citation, Kind, Memory, Surface
from memstore.verify import GitCodebase, Verdict, VerdictStatus, Verifier, verify_memories
from memstore.verify.claims import code_form

EXPECTED = {
    "valid": VerdictStatus.VALID,
    "moved": VerdictStatus.REANCHORED,
    "contradicted": VerdictStatus.CONTRADICTED,
    "unsupported": VerdictStatus.UNSUPPORTED,
    "missing": VerdictStatus.MISSING,
}
T0 = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass
class HandScore:
    """Tallies over memories and wordings; ``mistakes`` only for sets whose failures may be read."""

    tally: Counter[str] = field(default_factory=Counter)
    classes: Counter[tuple[str, str]] = field(default_factory=Counter)
    judges: Counter[tuple[str, str]] = field(default_factory=Counter)
    confusion: Counter[tuple[str, str]] = field(default_factory=Counter)
    mistakes: list[str] = field(default_factory=list)

    def add(self, memory: HandMemory, verdicts: list[Verdict], *, readable: bool) -> None:
        t = self.tally
        want = EXPECTED[memory.label]
        t["memories"] += 1
        t["agree"] += len({v.status for v in verdicts}) == 1
        t["all right"] += all(v.status is want for v in verdicts)
        for number, (fact, verdict) in enumerate(zip(memory.facts, verdicts, strict=True)):
            right = verdict.status is want
            t["wordings"] += 1
            t["right"] += right
            t[f"n {memory.label}"] += 1
            t[f"right {memory.label}"] += right
            self.confusion[(memory.label, verdict.status.value)] += 1
            self.classes[(memory.kind, "n")] += 1
            self.classes[(memory.kind, "right")] += right
            judge = getattr(verdict, "judge", "") or "reference"
            self.judges[(judge, "n")] += 1
            self.judges[(judge, "right")] += right
            usable = memory.label in {"valid", "moved"}
            t["usable"] += usable
            t["false invalidation"] += usable and not verdict.status.usable
            t["missed bad"] += not usable and verdict.status.usable
            fixed = self._correction(memory, verdict)
            placed = self._citations(memory, verdict)
            if readable and (not right or fixed is False or placed is False):
                self.mistakes.append(_mistake(memory, number, fact, verdict, right, fixed, placed))

    def _correction(self, memory: HandMemory, verdict: Verdict) -> bool | None:
        if memory.label != "contradicted" or not memory.current:
            return None
        t = self.tally
        t["corrections due"] += 1
        self.classes[(memory.kind, "due")] += 1
        contradicted = verdict.status is VerdictStatus.CONTRADICTED
        fact = verdict.corrected.fact if verdict.corrected is not None and contradicted else ""
        kept = bool(fact) and any(said(fact, v) for v in memory.stale)
        t["old value kept"] += kept
        fixed = contradicted and bool(fact) and all(said(fact, v) for v in memory.current) and not kept
        t["corrections right"] += fixed
        self.classes[(memory.kind, "fixed")] += fixed
        return fixed

    def _citations(self, memory: HandMemory, verdict: Verdict) -> bool | None:
        if memory.kind not in {"moved", "edited"} or verdict.status is not VerdictStatus.REANCHORED:
            return None
        self.tally["citations"] += 1
        now = verdict.corrected.citations if verdict.corrected is not None else ()
        right = [(c.path, c.line) for c in now] == [(c.path, c.line) for c in memory.moved_to]
        self.tally["citations right"] += right
        return right


def said(fact: str, value: str) -> bool:
    """Whether ``fact`` states ``value``: as a whole token where it is one word or number (a word in
    any case), else its tokens in order (quotes, spacing and backticks aside); a pin (``>=2``) also
    by its version."""
    core = value.strip().strip("`").strip()
    if len(core) >= 2 and core[0] == core[-1] and core[0] in "\"'":
        core = core[1:-1]
    if not core:
        return False
    text = " ".join(fact.replace("`", " ").split())
    left = r"(?<![\w.])" if core[0].isalnum() or core[0] == "_" else ""
    right = r"(?![\w])" if core[-1].isalnum() or core[-1] == "_" else ""
    flags = re.IGNORECASE if core.isalpha() else 0  # a word is said in any case: "ERROR level" says error
    if re.search(left + re.escape(core) + right, text, flags):
        return True
    if re.search(r"[^\w.]", core) and code_form(core).replace('"', "") in code_form(text).replace('"', ""):
        return True
    pinned = re.fullmatch(r"(?:===|==|>=|<=|~=|!=|\^|~|>|<)\s*(v?\d[\w.*]*)", core)
    return pinned is not None and said(fact, pinned.group(1))


def _mistake(
    memory: HandMemory, number: int, fact: str, verdict: Verdict, right: bool, fixed: bool | None, placed: bool | None
) -> str:
    cited = ", ".join(str(c) for c in memory.citations)
    what = f"{memory.label}->{verdict.status.value}" if not right else ("correction" if fixed is False else "citation")
    got = verdict.corrected.fact if fixed is False and verdict.corrected is not None else verdict.reason
    if placed is False and verdict.corrected is not None:
        got = f"now {[str(c) for c in verdict.corrected.citations]}, want {[str(c) for c in memory.moved_to]}"
    judge = getattr(verdict, "judge", "") or "reference"
    return f"{memory.id}#{number + 1} {memory.kind}: {what} [{judge}] {cited} {fact[:110]!r} :: {got[:160]}"


def as_memories(memory: HandMemory, old: GitCodebase) -> list[Memory]:
    """One stored memory per wording, its citations anchored at release `old`."""
    citations = tuple(_anchored(c, old) for c in memory.citations)
    return [
        Memory(
            id=f"mem_{memory.id}_{n}",
            repo="bench/handwritten",
            kind=Kind.FACT,
            subject=memory.subject,
            fact=fact,
            citations=citations,
            reason="Learned while working on the code.",
            author="agent",
            surface=Surface.CODING_AGENT,
            created_at=T0,
            refreshed_at=T0,
        )
        for n, fact in enumerate(memory.facts)
    ]


def _anchored(citation: Citation, old: GitCodebase) -> Citation:
    lines = old.read(citation.path).lines
    snippet = "\n".join(lines[citation.line - 1 : citation.last_line])
    return Citation(citation.path, citation.line, citation.end_line, snippet=snippet, commit=old.commit)


def evaluate(project: Project, score: HandScore, verifier: Verifier | None, timing: list[float]) -> None:
    memories = load(project)
    if not memories:
        return
    with tempfile.TemporaryDirectory() as tmp:
        built = build(project, Path(tmp) / project.name)
        old, new = GitCodebase(built.path, built.commits["old"]), GitCodebase(built.path, built.commits["new"])
        stored = [as_memories(m, old) for m in memories]
        flat = [m for group in stored for m in group]
        verify_memories(flat, new, verifier=verifier)  # warm the caches
        started = time.perf_counter()
        verdicts = verify_memories(flat, new, verifier=verifier)
        timing.append((time.perf_counter() - started) / max(len(flat), 1))
        for index, memory in enumerate(memories):
            score.add(memory, verdicts[3 * index : 3 * index + 3], readable=project.split != "holdout")


def _rate(part: int, whole: int) -> str:
    return f"{part / whole:>7.1%}" if whole else "      -"


def report(title: str, score: HandScore, show: int) -> None:
    t = score.tally
    n, usable = t["wordings"], t["usable"]
    print(f"{title}: {t['memories']} memories, {n} wordings")
    print(f"  {'class':<22}{'label':<14}{'wordings':>9}{'right':>9}{'corrected':>12}")
    for kind in LABELS:
        count = score.classes[(kind, "n")]
        if not count:
            continue
        due = score.classes[(kind, "due")]
        fixed = f"{score.classes[(kind, 'fixed')]}/{due}" if due else "-"
        print(f"  {kind:<22}{LABELS[kind]:<14}{count:>9}{_rate(score.classes[(kind, 'right')], count):>9}{fixed:>12}")
    print(f"  verdict accuracy:        {_rate(t['right'], n)}   (target >= 95%)")
    print(f"  false invalidation:      {_rate(t['false invalidation'], usable)}   (target <= 2%)")
    print(f"  missed bad:              {_rate(t['missed bad'], n - usable)}   (target <= 5%)")
    print(f"  corrected value right:   {_rate(t['corrections right'], t['corrections due'])}   "
          f"of {t['corrections due']} (target >= 80%); keeping a stale value: {t['old value kept']}")  # fmt: skip
    print(f"  paraphrase agreement:    {_rate(t['agree'], t['memories'])}   (target >= 95%; all three right: "
          f"{_rate(t['all right'], t['memories']).strip()})")  # fmt: skip
    print(f"  citation accuracy:       {_rate(t['citations right'], t['citations'])}   of {t['citations']} re-anchored")
    judges = sorted({j for j, _ in score.judges})
    print("  by judge (the step that decided):  " + ", ".join(
        f"{j} {score.judges[(j, 'n')]} ({_rate(score.judges[(j, 'right')], score.judges[(j, 'n')]).strip()} right)"
        for j in judges))  # fmt: skip
    verdicts = [v.value for v in VerdictStatus]
    print("  confusion (label -> verdict):  " + " ".join(f"{v[:11]:>11}" for v in verdicts))
    for label in EXPECTED:
        print(f"    {label:<28}" + " ".join(f"{score.confusion[(label, v)]:>11}" for v in verdicts))
    for line in score.mistakes[:show]:
        print("   ", line)
