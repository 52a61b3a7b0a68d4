"""Scoring one session: grading data meets what the agent did.

Read only after the agent's session is over, by the harness: the task's merge check,
expected findings and answer; each seeded memory's truth and claim. Every figure comes from
actions (git's own diff of the change, the findings and answer reported), the same way for
every kind of agent; an agent's own account (``use`` events) counts for nothing here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from memstore.access import Actor
from memstore.errors import MemstoreError
from memstore.harness.grading.actions import Actions
from memstore.harness.grading.answers import answer_is_right
from memstore.harness.records import Outcome
from memstore.harness.scenarios import Location, SeedMemory, Task, Truth, normalise, values_in
from memstore.model import Memory, Status, Surface
from memstore.store import MemoryStore

__all__ = ["healed", "outcome", "reanchored", "stale_uses", "states"]

ValueReader = Callable[[Location], str | None]


def outcome(task: Task, actions: Actions, merged: bool | None, expected_answer: str | None = None) -> Outcome:
    """The task's outcome on its surface, and whether it went right as a whole (``task_success``):
    the change merged; the answer right (``expected_answer`` when the scenario reads it off the
    code, else its ``answer``); every expected finding reported and no other."""
    if task.surface is Surface.CODING_AGENT:
        return Outcome(merged=bool(merged), task_success=bool(merged))
    if task.surface is Surface.CODE_REVIEW:
        expected = {f.path for f in task.findings}
        reported = {path for path, _ in actions.findings}
        correct = len(reported & expected)
        return Outcome(
            findings=len(reported),
            correct_findings=correct,
            expected_findings=len(expected),
            task_success=reported == expected,
        )
    right = answer_is_right(actions.answer, expected_answer or task.answer, task.match)
    return Outcome(answer_correct=right, task_success=right)


def states(text: str, value: str) -> bool:
    """Whether ``text`` states ``value``: the same value in any usual spelling (``14 days`` for
    ``14d``), or, for a value that is not a number or version, its words in order."""
    wanted = values_in(value)
    if wanted:
        return bool(set(wanted) & set(values_in(text)))
    needle = normalise(value)
    return bool(needle) and re.search(rf"(?<![\w-]){re.escape(needle)}(?![\w-])", normalise(text)) is not None


def stale_uses(
    task: Task,
    actions: Actions,
    handed: Sequence[Memory],
    truth: Mapping[str, SeedMemory],
    moved_to: Mapping[str, Sequence[tuple[str, int] | None]] | None = None,
) -> list[str]:
    """The bad memories handed to the session whose error one of its actions repeats.

    A memory's error, from its claim (grading data): a value it states that is false (written by
    an edit, given as an answer, or in a finding); files it points to that hold nothing of what
    it says (edited or flagged); files it says to leave alone that the change needed (left
    unedited). A moved memory the task needs errs by its stale line numbers (``moved_to``: memory
    id -> where git's own diff puts each citation's line now): see `_misled_by_moved`. A memory
    whose label has lapsed (the trial's own merges changed what it cites) is not in ``truth``
    and is not judged.
    """
    repeated: list[str] = []
    needed = task.check.paths() if task.surface is Surface.CODING_AGENT else set()
    for memory in handed:
        spec = truth.get(memory.id)
        if spec is None:
            continue
        if spec.truth is Truth.MOVED:
            if spec.key in task.needs and _misled_by_moved(memory, (moved_to or {}).get(memory.id, ()), actions):
                repeated.append(memory.id)
            continue
        if spec.truth.usable:
            continue
        claim = spec.claim
        pointed = set(claim.points_to)
        if (
            (claim.states and any(states(text, claim.states) for text in actions.texts()))
            or (pointed & (actions.touched | {path for path, _ in actions.findings}))
            or (claim.skips and task.surface is Surface.CODING_AGENT and set(claim.skips) & needed - actions.touched)
        ):
            repeated.append(memory.id)
    return repeated


def _misled_by_moved(memory: Memory, now: Sequence[tuple[str, int] | None], actions: Actions) -> bool:
    """Whether the change followed a moved memory's stale citations: it edited the line a
    citation names at its old number while the cited line, now elsewhere, was left alone; or it
    acted on the memory (touched a file it cites) but left untouched the file where a moved or
    renamed citation's line stands now."""
    edited = {(path, line) for path, line, _ in actions.removed}
    cited = {c.path for c in memory.citations} | {w[0] for w in now if w is not None}
    acted = bool(cited & actions.touched)
    for citation, where in zip(memory.citations, now, strict=False):
        if where is None or where == (citation.path, citation.line):
            continue
        if (citation.path, citation.line) in edited and where not in edited:
            return True
        if acted and where[0] not in actions.touched:
            return True
    return False


def reanchored(
    events: Sequence[tuple[str, str, str]],
    handed: Sequence[Memory],
    truth: Mapping[str, SeedMemory],
    true_lines: Mapping[str, list[tuple[str, int] | None]],
    key_of: Mapping[str, str],
) -> tuple[int, int]:
    """(moved memories handed, those re-anchored to the lines git's own diff puts them at)."""
    moved = [m.id for m in handed if m.id in truth and truth[m.id].truth is Truth.MOVED]
    claimed: dict[str, list[tuple[str, int]]] = {}
    for kind, memory_id, detail in events:
        if kind == "reanchor":
            places = [where.rsplit(":", 1) for where in detail.split(";") if where]
            claimed[memory_id] = [(path, int(line.split("-")[0])) for path, line in places]
    right = 0
    for old in moved:
        want = true_lines.get(key_of.get(old, ""), [])
        right += bool(want) and all(w is not None for w in want) and claimed.get(old) == want
    return len(moved), right


def healed(store: MemoryStore, bad: Mapping[str, SeedMemory], read_values: Sequence[ValueReader]) -> list[str]:
    """The initial pool's bad memories that are out of use at the end of a trial, sorted: retired,
    or superseded by a version whose fact states the true value (read by the harness where the
    claim says the truth is, at the evaluation ref or at the trial's end), not the stale one."""
    found = []
    for memory_id, spec in sorted(bad.items()):
        try:
            versions = store.history(memory_id, actor=Actor(spec.author))
        except MemstoreError:
            continue
        head = versions[-1]
        if head.id == memory_id:
            if head.status is Status.RETIRED:
                found.append(memory_id)
            continue
        if head.status is not Status.ACTIVE or spec.claim.at is None:
            continue
        true_values = {v for read in read_values if (v := read(spec.claim.at)) is not None}
        stale = bool(spec.claim.states) and states(head.fact, spec.claim.states)
        if not stale and any(states(head.fact, v) for v in true_values):
            found.append(memory_id)
    return found
