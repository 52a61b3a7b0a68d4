"""The work a stub agent does in one session, by surface and intent: a program over its tools.

A `Program` acts on the memories its stub found relevant (`Known`: each as the stub holds it,
stored or verified) and, where they cover nothing, explores the working copy within its
`Budget`: it sets a value everywhere it is kept, adds an entry everywhere the list is kept,
makes code follow the convention the files next to it show, reviews a pull request against
the places that hold what it changes, or answers a question. The rules over lines it uses are
in `memstore.agents.craft`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from memstore.agents import craft
from memstore.agents.reading import (
    DEFINES,
    changed_places,
    entry_additions,
    names_in,
    names_path,
    places_text,
    renamed,
    used_outside,
    value_changes,
)
from memstore.harness.run import AgentSession, Hit, PullRequest
from memstore.harness.scenarios import Intent, IntentAction
from memstore.model import Citation, Memory, Surface

if TYPE_CHECKING:
    from memstore.agents.params import StubParams

__all__ = ["Budget", "Known", "Program"]


@dataclass(frozen=True)
class Known:
    """What one memory tells the agent, as the agent holds it (stored, or verified)."""

    memory: Memory
    citations: tuple[Citation, ...]
    fact: str
    used: Memory | None = None  # the version relied on: the memory, or the correction stored in its place
    validated: bool = False  # verified to hold as it stands
    left_out: int = 0  # citations the agent did not follow (their lines no longer name what they did)


class Budget:
    def __init__(self, config: StubParams) -> None:
        self.searches, self.reads = config.searches, config.reads

    def search(self) -> bool:
        if self.searches <= 0:
            return False
        self.searches -= 1
        return True


class Program:
    """One session's work, by surface and intent."""

    def __init__(
        self, session: AgentSession, config: StubParams, relevant: list[Known], skips: list[str], *, learn: bool
    ) -> None:
        self.session, self.tools, self.relevant, self.skips, self.learn = session, session.tools, relevant, skips, learn
        self.budget = Budget(config)
        self.rng = session.rng("explore")

    def run(self) -> None:
        task = self.session.task
        if task.surface is Surface.CODE_REVIEW and task.pull_request is not None:
            self.review(task.pull_request)
        elif task.intent is None:
            return
        elif task.intent.action is IntentAction.ASK or task.surface is Surface.CLI:
            self.answer(task.intent, task.question or task.prompt)
        elif task.intent.action is IntentAction.SET:
            self.set_value(task.intent)
        elif task.intent.action is IntentAction.ADD:
            self.add_entry(task.intent)
        elif task.intent.action is IntentAction.USE:
            self.follow_convention(task.intent)

    # -- finding things -----------------------------------------------------------------

    def _search(self, pattern: str, *, literal: bool = False) -> list[Hit]:
        return self.tools.search(pattern, literal=literal) if self.budget.search() else []

    def _definitions(self, subject: str, also: tuple[str, ...] = ()) -> list[Hit]:
        """Where the subject is given a value, found as a careful reader finds it: its name
        searched in every spelling; then, in one more search, the names the lines mentioning it
        give beside it (a test's table of what each setting is called where) and the value found.
        A line giving a value under one of those names is a place, and so is a line holding the
        value under a key that shares a word with the subject. A value under an unrelated name is
        not: nothing says it is the same setting (it may be a constant that happens to agree)."""
        hits = self._search(craft.name_pattern(subject))
        found = [h for h in hits if names_in(h.text, subject, strict=True)]
        aliases = list(dict.fromkeys(a for h in hits if h not in found for a in craft.linked_names(h.text, subject)))
        values = list(dict.fromkeys([*also, *(d.bare for h in found if (d := craft.definition(h.text)) is not None)]))
        if not values and not aliases:
            return found
        pattern = "|".join([*(rf"(?<![\w.]){re.escape(v)}(?![\w.])" for v in values), *(re.escape(a) for a in aliases)])
        for hit in self._search(pattern):
            d = craft.definition(hit.text)
            if hit in found or d is None:
                continue
            if any(craft.same_name(d.key, a) for a in aliases) or (
                d.bare in values and craft.shares_a_word(d.key, subject)
            ):
                found.append(hit)
        return found

    def _openable(self, paths: Iterable[str]) -> list[str]:
        """The files the read budget lets the agent open, in a seeded order when it cannot open all."""
        unique = list(dict.fromkeys(paths))
        if len(unique) > self.budget.reads:
            self.rng.shuffle(unique)
            unique = sorted(unique[: self.budget.reads])
        self.budget.reads -= len(unique)
        return unique

    def _skipped(self, path: str) -> bool:
        return any(names_path(instruction, path) for instruction in self.skips)

    def _left_out(self) -> bool:
        """Whether a memory's citation was left out: the place it named must be looked for."""
        return any(k.left_out for k in self.relevant)

    def _memory_places(self) -> list[tuple[str, int]]:
        return [(c.path, line) for k in self.relevant for c in k.citations for line in (c.line,)]

    # -- coding: set a value everywhere it is kept --------------------------------------

    def set_value(self, intent: Intent) -> None:
        # A memory that names the places a setting is kept is followed; one that names a single
        # place (its value, say) is a start, and the agent still looks for the others.
        places = list(dict.fromkeys(self._memory_places()))
        explored = len(places) < 2 or self._left_out()
        if explored:
            places += [(h.path, h.line) for h in self._definitions(intent.subject) if (h.path, h.line) not in places]
        edited: list[tuple[str, int]] = []
        for path in self._openable(p for p, _ in places):
            lines = self.tools.lines(path)
            if lines is None or self._skipped(path):
                continue
            for place_path, line in places:
                if place_path != path or not 1 <= line <= len(lines):
                    continue
                new = craft.with_value(lines[line - 1], intent.value)
                if new != lines[line - 1] and self.tools.replace_line(path, line, new):
                    lines[line - 1] = new
                    edited.append((path, line))
        if explored and self.learn and len(edited) >= 2:
            self._learn_places(f"{intent.subject} synchronization", edited, f"hold {intent.subject} and must match")

    def _learn_places(self, subject: str, places: list[tuple[str, int]], says: str) -> None:
        """Store what exploring found: the places that hold one setting, named by their keys (no
        value: the places keep agreeing when the value changes)."""
        named = [
            f"`{d.key}` ({path})" for path, _, text in places_text(self.tools, places) if (d := craft.definition(text))
        ]
        if len(named) < 2:
            return
        self.tools.store_memory(
            subject,
            f"{', '.join(named[:-1])} and {named[-1]} {says}.",
            [f"{path}:{line}" for path, line in places],
            "Found by exploring: changing one place alone breaks the others.",
        )

    # -- coding: add an entry everywhere the list is kept -----------------------------------

    def add_entry(self, intent: Intent) -> None:
        files = list(dict.fromkeys(c.path for k in self.relevant for c in k.citations))
        explored = not files
        if explored:
            named = [h.path for h in self._search(craft.name_pattern(intent.subject))]
            files = list(dict.fromkeys(named))
        opened = {p: lines for p in self._openable(files) if (lines := self.tools.lines(p)) is not None}
        siblings = craft.shared_entries(list(opened.values()))
        done: list[str] = []
        for path, lines in opened.items():
            if self._skipped(path) or not siblings:
                continue
            added = craft.with_entry(lines, siblings, intent.value, json=path.endswith(".json"))
            if added is not None and self.tools.insert_lines(path, added[0], added[1]):
                done.append(path)
        if explored and self.learn and len(done) >= 2:
            self.tools.store_memory(
                f"{intent.subject} change together",
                f"{intent.subject} are listed in {', '.join(done)}: an entry added to one goes in all.",
                [f"{p}:1" for p in done],
                "Found while adding an entry.",
            )

    # -- coding: follow the project's convention ---------------------------------------------

    def follow_convention(self, intent: Intent) -> None:
        target = self._target(intent.target)
        lines = self.tools.lines(target) if target is not None else None
        if target is None or lines is None:
            return
        example_files = list(dict.fromkeys(c.path for k in self.relevant for c in k.citations if c.path != target))
        explored = not example_files
        if explored:  # the files next to it show how it is done here
            folder, suffix = PurePosixPath(target).parent, PurePosixPath(target).suffix
            example_files = [
                p
                for p in self.tools.files()
                if PurePosixPath(p).parent == folder and p.endswith(suffix) and p != target and "__init__" not in p
            ]
        examples = [ex for p in self._openable(example_files) if (ex := self.tools.lines(p)) is not None]
        # The lines a memory points at come first: they are the example it means.
        pointed = [
            text for k in self.relevant for c in k.citations if c.path != target for text in self._cited_lines(c)
        ]
        changes = craft.convention_pairs(lines, pointed + [line for ex in examples for line in ex])
        named = next((n for k in self.relevant for n in craft.call_names(k.fact)), None)
        new_lines = list(lines)
        for index, new_line, old_root, shown_root in changes:
            # A memory that names the helper is believed over the example it cites.
            root = named or shown_root
            new_lines[index] = renamed(new_line, shown_root, root)
            if craft.import_of(root, new_lines) is not None:
                continue
            provider = next((ex[i] for ex in examples if (i := craft.import_of(shown_root, ex)) is not None), None)
            if provider is None:
                continue
            provider = renamed(provider, shown_root, root)
            old_import = craft.import_of(old_root, new_lines)
            if old_import is not None and not used_outside(new_lines, old_root, old_import):
                new_lines[old_import] = provider
            else:
                new_lines.insert(0, provider)
        if new_lines != lines:
            self.tools.write(target, "\n".join(new_lines) + "\n")
        if explored and self.learn and changes and example_files:
            self.tools.store_memory(
                f"{intent.subject} convention",
                f"Code here uses `{changes[0][3]}()` for {intent.subject}, as {example_files[0]} does.",
                [f"{example_files[0]}:1"],
                "Found by reading the files next to the one being changed.",
            )

    def _name_by_exploring(self, kind: str, subject: str) -> list[str]:
        """A name asked for (a header, a file), read off the lines that mention its kind and the
        subject; for a function, else the first call on the lines that mention the subject."""
        hits = self._search(rf"\b{re.escape(kind)}")
        found = craft.names_near([h.text for h in hits], kind, subject)[:1]
        if found or kind not in {"function", "helper"}:
            return found
        words = [w for w in craft.subject_words(subject) if w not in {kind, "helper", "function"}]
        if not words:
            return []
        lines = [h.text for h in self._search("|".join(re.escape(w) for w in words))]
        first = next((name for line in lines for name in craft.called_names(line)), None)
        return [first] if first else []

    def _cited_lines(self, citation: Citation) -> list[str]:
        """The lines a citation names, at the numbers it holds."""
        lines = self.tools.lines(citation.path) or []
        return lines[citation.line - 1 : citation.end_line or citation.line]

    def _value_at(self, citations: tuple[Citation, ...]) -> str | None:
        """The value assigned on the first cited line that assigns one (as the agent holds it)."""
        for citation in citations:
            lines = self.tools.lines(citation.path) or []
            if 1 <= citation.line <= len(lines) and (found := craft.definition(lines[citation.line - 1])):
                return found.bare
        return None

    def _target(self, words: str) -> str | None:
        parts = craft.subject_words(words)
        if not parts or not self.budget.search():
            return None
        candidates = self.tools.files("|".join(re.escape(p) for p in parts))
        scored = sorted(candidates, key=lambda p: (-sum(w in p.lower() for w in parts), p))
        return scored[0] if scored else None

    # -- review ---------------------------------------------------------------------------

    def review(self, pr: PullRequest) -> None:
        changed = set(pr.changed_files)
        tied = [k for k in self.relevant if {c.path for c in k.citations} & changed]
        elsewhere = False  # a memory tied the change to another file: it is followed, not explored
        for known in tied:
            together = sorted({c.path for c in known.citations} & changed)
            for path in sorted({c.path for c in known.citations} - changed):
                self.tools.flag(path, f"changes together with {', '.join(together)}")
                elsewhere = True
        if elsewhere and not self._left_out():
            return
        flagged: list[Hit] = []
        for entry, siblings in entry_additions(pr.diff):
            pattern = "|".join(rf"(?<![\w]){re.escape(s)}(?![\w])" for s in siblings)
            for path in dict.fromkeys(h.path for h in self._search(pattern) if h.path not in changed):
                text = self.tools.read(path) or ""
                if not re.search(rf"(?<![\w]){re.escape(entry)}(?![\w])", text):
                    note = f"lists {', '.join(siblings[:3])} but not {entry}, which the pull request adds"
                    self.tools.flag(path, note)
                    flagged.append(Hit(path, 1, ""))
        for key, old in value_changes(pr.diff):
            # The places that hold what the pull request changes, found as for a change (the
            # key's name, what the repository says it is called elsewhere, its old value).
            for hit in self._definitions(key, also=(old,)):
                found = craft.definition(hit.text)
                if hit.path in changed or found is None or found.bare != old:
                    continue
                self.tools.flag(hit.path, f"still holds {old}, which the pull request changes in {key}")
                flagged.append(hit)
        if self.learn and flagged:
            places = [(h.path, h.line) for h in flagged if h.text] + changed_places(pr.diff)
            keys = ", ".join(
                sorted({d.key for _, _, t in places_text(self.tools, places) if (d := craft.definition(t))})
            )
            self._learn_places(f"{keys or 'Files'} change together", places, "hold the same value and change together")

    # -- CLI: answer a question -------------------------------------------------------------

    def answer(self, intent: Intent, question: str) -> None:
        # What the facts say (else, for a value, what stands where they point); the most relevant
        # first, and for a question about a command, the fullest command any of them gives.
        kind = craft.asked_name(question)
        said = [
            s
            for k in self.relevant
            if (s := craft.answer_from_fact(k.fact, question) or (None if kind else self._value_at(k.citations)))
        ]
        if not said and kind == "file" and (defined := DEFINES.search(question)) is not None:
            said = self._defining_file(defined.group("name"))
        if not said and kind is not None:
            said = self._name_by_exploring(kind, intent.subject)
        if said:
            command = re.search(r"(?i)\bcommand\b", question) is not None
            self.tools.give_answer(max(said, key=lambda s: len(s.split())) if command else said[0])
            return
        # A qualified name (``Class.CONSTANT``) is written as its last part where it is defined.
        subject = intent.subject.rpartition(".")[2] if craft.identifiers(intent.subject) else intent.subject
        hits = self._search(craft.name_pattern(subject))
        named = [h for h in hits if names_in(h.text, subject, strict=True)]
        if not named:  # a key that is one of the subject's words: the ``test`` script for "test command"
            words = craft.subject_words(subject)
            pattern = "|".join(rf"(?<![A-Za-z0-9]){re.escape(w)}(?![A-Za-z0-9])" for w in words)
            named = [
                h
                for h in self._search(pattern)
                if (d := craft.definition(h.text)) is not None and d.key.lower().strip("\"'") in words
            ]
        # The file the question names, where it names one, before any other.
        named.sort(key=lambda h: PurePosixPath(h.path).name not in question)
        found = next((d for h in named if (d := craft.definition(h.text)) is not None), None)
        self.tools.give_answer(found.bare if found is not None else "")
        if found is not None and self.learn:
            hit = next(h for h in named if craft.definition(h.text) == found)
            self.tools.store_memory(
                intent.subject,
                f"{intent.subject} is `{found.bare}` ({found.key}).",
                [f"{hit.path}:{hit.line}"],
                "Found while answering a question about it.",
            )

    def _defining_file(self, name: str) -> list[str]:
        """The file that defines ``name`` (a function, a class), read off a search for its definition."""
        pattern = rf"^\s*(?:async\s+)?(?:def|class|function)\s+{re.escape(name)}\b"
        return list(dict.fromkeys(h.path for h in self._search(pattern)))[:1]
