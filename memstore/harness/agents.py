"""Agents: the `Agent` protocol, the three built-in stubs, and their registry.

The stubs are deterministic given (run seed, scenario, task, trial). What makes them
imperfect is explicit and settable (`AgentConfig`), and each default has its reason:

- ``explore = 0.5``: a piece of the work that no memory reveals (a second file that must
  change, a finding to flag, an answer to find) is found by exploring the repository half
  the time: an unaided agent finds a cross-file invariant about as often as it misses it.
- ``slip = 0.02``: a step the agent knows it must take is botched 2% of the time, so even
  perfect knowledge does not merge every change.
- ``heed = 0.95``: a relevant memory in the prompt is acted on 95% of the time.

Exploration is simulated: what the agent does not know from memory it finds with
probability ``explore``, drawn from a random stream that is the same in every arm, so the
arms' outcomes pair up task by task. What it knows from memory comes from the memories
themselves: their citations (as stored, or re-anchored by verification) and their facts.

- ``no-memory``: memory switched off: no reads, no writes.
- ``trusting``: uses every relevant memory it is given as it is; never verifies; stores
  what it learns.
- ``jit-verify``: the seeds' loop: verifies every memory before use, uses only what holds,
  stores a corrected version when the code contradicts a memory or its citations moved,
  retires what has nothing behind it, refreshes what it validated and used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Protocol, runtime_checkable

from memstore.errors import ConfigurationError
from memstore.harness.session import Session
from memstore.model import Citation, Kind, Memory, MemoryDraft, Surface
from memstore.verify import VerdictStatus
from memstore.verify.claims import mentions, terms

__all__ = ["AGENTS", "Agent", "AgentConfig", "JitVerifyAgent", "NoMemoryAgent", "TrustingAgent", "make_agent"]


@dataclass(frozen=True)
class AgentConfig:
    """What makes a stub agent imperfect (see the module docstring for the reasons)."""

    explore: float = 0.5
    slip: float = 0.02
    heed: float = 0.95

    @classmethod
    def parse(cls, pairs: Iterable[str]) -> AgentConfig:
        """From ``name=value`` strings, such as ``explore=0.3``."""
        config = cls()
        known = {f.name for f in fields(cls)}
        for pair in pairs:
            name, _, value = pair.partition("=")
            if name not in known:
                raise ConfigurationError(f"unknown agent parameter {name!r}; known: {', '.join(sorted(known))}")
            try:
                number = float(value)
            except ValueError as exc:
                raise ConfigurationError(f"agent parameter {name} must be a number, got {value!r}") from exc
            if not 0 <= number <= 1:
                raise ConfigurationError(f"agent parameter {name} is a probability, got {number}")
            config = replace(config, **{name: number})
        return config


@runtime_checkable
class Agent(Protocol):
    """Works one session: reads ``session.memories``, acts through ``session.tools``."""

    name: str
    uses_memory: bool

    def work(self, session: Session) -> None: ...


@dataclass(frozen=True)
class _Known:
    """What one memory tells the agent: where (path, line) and what (its fact, the cited text).

    ``used`` is the version relied on: the memory itself, or the correction stored in its
    place (None when the agent could not store its correction and works from the draft).
    """

    memory: Memory
    citations: tuple[Citation, ...]
    fact: str
    texts: tuple[str, ...] = ()
    used: Memory | None = None
    validated: bool = False  # verified to hold as it stands


def _relevant(session: Session, known: _Known) -> bool:
    """Whether a memory bears on the task: it cites a file the task touches, or shares its words."""
    task = session.task
    touched = {c.path for c in task.change[:1]}
    if task.pull_request is not None:
        touched |= set(session.tools.changed_files())
    if touched & {c.path for c in known.citations}:
        return True
    asked = terms(f"{task.prompt} {task.question}")
    return len(asked & terms(f"{known.memory.subject} {known.fact}")) >= 2


class _Stub:
    """The shared loop of the stub agents; subclasses decide how a memory is assessed."""

    name = "stub"
    uses_memory = True

    def __init__(self, config: AgentConfig | None = None) -> None:
        self.config = config or AgentConfig()

    def assess(self, session: Session, memory: Memory) -> _Known | None:
        raise NotImplementedError

    def settle(self, session: Session, known: _Known) -> None:
        """After a memory was used: nothing by default."""

    def work(self, session: Session) -> None:
        knowledge: list[_Known] = []
        if self.uses_memory:
            heed = session.rng("heed")
            for memory in session.memories:
                known = self.assess(session, memory)
                roll = heed.random()
                if known is None or not _relevant(session, known) or roll >= self.config.heed:
                    continue
                if known.used is not None and known.used.id == memory.id:
                    session.tools.use(memory)
                else:
                    session.record("use", known.used.id if known.used else "", f"correction of {memory.id}")
                self.settle(session, known)
                knowledge.append(known)
        {
            Surface.CODING_AGENT: self._code,
            Surface.CODE_REVIEW: self._review,
            Surface.CLI: self._answer,
        }[session.task.surface](session, knowledge)
        if self.uses_memory:
            for learned in session.task.learn:
                made = session.tools.store_memory(
                    learned.subject, learned.fact, list(learned.citations), learned.reason
                )
                if made is not None:
                    session.learned[made.id] = learned.key

    def _code(self, session: Session, knowledge: list[_Known]) -> None:
        task, tools = session.task, session.tools
        explore, slip = session.rng("explore"), session.rng("slip")
        stated = task.change[0].path if task.change else ""
        for index, change in enumerate(task.change):
            found = explore.random() < self.config.explore
            botched = slip.random() < self.config.slip
            first_line = change.old.splitlines()[0] if change.old.strip() else change.old
            knows = (
                index == 0
                # a memory cites the place: the cited line (as the agent holds it) shows what to change
                or any(
                    c.path == change.path and first_line in (tools.line(c.path, c.line) or "")
                    for k in knowledge
                    for c in k.citations
                )
                # a memory says how the file being edited must be done (a convention)
                or (change.path == stated and bool(knowledge))
            )
            if (knows or found) and not botched:
                tools.edit(change.path, change.old, change.new)

    def _review(self, session: Session, knowledge: list[_Known]) -> None:
        tools, explore = session.tools, session.rng("explore")
        changed = set(tools.changed_files())
        for k in knowledge:  # files a memory says change together, left out of the pull request
            paths = {c.path for c in k.citations}
            if paths & changed:
                for path in sorted(paths - changed):
                    tools.flag(path, f"changes together with {', '.join(sorted(paths & changed))}")
        for finding in session.task.findings:
            if explore.random() < self.config.explore:
                tools.flag(finding.path, "found by reading the change")

    def _answer(self, session: Session, knowledge: list[_Known]) -> None:
        tools, explore = session.tools, session.rng("explore")
        found = explore.random() < self.config.explore
        expected = session.task.answer
        said = [k.fact for k in knowledge] + [t for k in knowledge for t in k.texts]
        said += [c.path for k in knowledge for c in k.citations]
        parts = [p.strip() for p in expected.split(",")]
        if all(any(mentions(text, part) or part == text for text in said) for part in parts) or found:
            tools.give_answer(expected)
        elif knowledge:
            tools.give_answer(knowledge[0].fact)  # what the memory says, right or wrong
        else:
            tools.give_answer("")


class NoMemoryAgent(_Stub):
    """Memory switched off: the control arm."""

    name = "no-memory"
    uses_memory = False

    def assess(self, session: Session, memory: Memory) -> _Known | None:
        return None


class TrustingAgent(_Stub):
    """Uses what it is given, as it is."""

    name = "trusting"

    def assess(self, session: Session, memory: Memory) -> _Known | None:
        return _Known(memory, memory.citations, memory.fact, used=memory)


class JitVerifyAgent(_Stub):
    """Verify before use; correct, re-anchor, retire, refresh (the seeds' loop)."""

    name = "jit-verify"

    def assess(self, session: Session, memory: Memory) -> _Known | None:
        if memory.kind is Kind.PREFERENCE:
            return _Known(memory, memory.citations, memory.fact, used=memory)
        tools = session.tools
        verdict = tools.verify(memory)
        texts = tuple(c.text for c in verdict.checks if c.status.readable and c.text is not None)
        if verdict.status is VerdictStatus.VALID:
            return _Known(memory, memory.citations, memory.fact, texts, used=memory, validated=True)
        if verdict.corrected is not None and verdict.status in {VerdictStatus.REANCHORED, VerdictStatus.CONTRADICTED}:
            draft: MemoryDraft = verdict.corrected
            if verdict.status is VerdictStatus.CONTRADICTED:
                tools.refuse(memory, f"contradicted: {verdict.reason}")  # the old claim is not used; its correction is
            cited = tuple(c for c in draft.citations if isinstance(c, Citation))
            session.record("reanchor", memory.id, ";".join(str(c) for c in cited))
            stored = tools.store_draft(draft, supersedes=memory.id)
            return _Known(memory, cited, draft.fact, texts, used=stored)
        tools.refuse(memory, f"{verdict.status.value}: {verdict.reason}")
        tools.retire(memory, f"jit-verify: {verdict.reason}")
        return None

    def settle(self, session: Session, known: _Known) -> None:
        if known.validated:  # validated and used: keep it alive
            session.tools.refresh(known.memory)


AGENTS: dict[str, Callable[[AgentConfig], Agent]] = {
    "no-memory": NoMemoryAgent,
    "trusting": TrustingAgent,
    "jit-verify": JitVerifyAgent,
}


def make_agent(
    spec: str, config: AgentConfig | None = None, *, timeout: float | None = None, base_dir: Path | None = None
) -> Agent:
    """An agent by name (``no-memory``, ``trusting``, ``jit-verify``) or ``command:CMD ARGS``.

    ``timeout`` (seconds per session) and ``base_dir`` (what relative paths in the command are
    relative to) apply to command agents.
    """
    if spec.startswith("command:"):
        from memstore.harness.command_agent import DEFAULT_TIMEOUT, CommandAgent

        agent: Agent = CommandAgent(
            spec.removeprefix("command:"), timeout=timeout or DEFAULT_TIMEOUT, base_dir=base_dir
        )
        return agent
    factory = AGENTS.get(spec)
    if factory is None:
        known = ", ".join([*AGENTS, "command:CMD"])
        raise ConfigurationError(f"unknown agent {spec!r}; known: {known}")
    return factory(config or AgentConfig())
