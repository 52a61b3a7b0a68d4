"""Agent mutants: the jit-verify stub with one part of the verify-and-correct loop broken, so that
an evaluation can be tested on whether it tells a broken agent from a good one.

Each is an agent spec ``mutant:NAME`` (``memstore eval --agent mutant:never-corrects``), a
treatment like jit-verify, and `AGENT_MUTANTS` says which metric must tell it apart from
jit-verify with a significant paired verdict (tests/testing/test_agent_mutants.py runs the
default library and a population sample for that). They are deliberately broken test
doubles, simulations like the stubs they come from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from memstore.agents import (
    JitVerifyAgent,
    Known,
    Program,
    StubAgent,
    StubParams,
    TrustingAgent,
    refused_for_instructions,
)
from memstore.errors import ConfigurationError
from memstore.harness.records import Role
from memstore.harness.run import AgentSession, split_params
from memstore.model import Citation, Kind, Memory, MemoryDraft
from memstore.verify import VerdictStatus

__all__ = ["AGENT_MUTANTS", "AgentMutant", "make_agent_mutant"]


class _ClaimsMemory(StubAgent):
    """Says it uses every memory it is handed, and works as if it had none."""

    name = "mutant:claims-memory"
    role = Role.TREATMENT

    def assess(self, session: AgentSession, memory: Memory) -> Known | None:
        return None

    def work(self, session: AgentSession) -> None:
        for memory in session.memories:
            session.tools.use(memory)
        Program(session, self.config, [], [], learn=self.config.learn).run()


class _Unverified(TrustingAgent):
    """Uses memory as it is stored, never verifying it (a trusting agent that calls itself a treatment)."""

    name = "mutant:unverified"
    role = Role.TREATMENT


class _IgnoresVerdict(StubAgent):
    """Verifies every memory, then acts on it as stored whatever the verdict said."""

    name = "mutant:ignores-verdict"
    verifies = True
    role = Role.TREATMENT

    def assess(self, session: AgentSession, memory: Memory) -> Known | None:
        if memory.kind is Kind.FACT:
            session.tools.verify(memory)
        return Known(memory, memory.citations, memory.fact, used=memory)


class _Corrector(JitVerifyAgent):
    """jit-verify's loop with its corrections replaced by `correct` (the mutants below)."""

    def correct(self, session: AgentSession, memory: Memory, draft: MemoryDraft, contradicted: bool) -> None:
        raise NotImplementedError

    def assess(self, session: AgentSession, memory: Memory) -> Known | None:
        if memory.kind is Kind.PREFERENCE:
            return super().assess(session, memory)
        verdict = session.tools.verify(memory)
        if refused_for_instructions(session, memory, verdict, self.name):
            return None
        if verdict.status is VerdictStatus.VALID:
            return Known(memory, memory.citations, memory.fact, used=memory, validated=True)
        if verdict.corrected is not None and verdict.status in {VerdictStatus.REANCHORED, VerdictStatus.CONTRADICTED}:
            contradicted = verdict.status is VerdictStatus.CONTRADICTED
            if contradicted:
                session.tools.refuse(memory, f"contradicted: {verdict.reason}")
            self.correct(session, memory, verdict.corrected, contradicted)
            cited = tuple(c for c in verdict.corrected.citations if isinstance(c, Citation))
            return Known(memory, cited, verdict.corrected.fact, used=memory)  # acts on the verified version
        session.tools.refuse(memory, f"{verdict.status.value}: {verdict.reason}")
        session.tools.retire(memory, f"{self.name}: {verdict.reason}")
        return None


class _NeverCorrects(_Corrector):
    """Verifies and acts on the verified version, but never stores a correction (bad memories
    it cannot retire stay in the store for the next agent)."""

    name = "mutant:never-corrects"

    def correct(self, session: AgentSession, memory: Memory, draft: MemoryDraft, contradicted: bool) -> None:
        return


class _CorrectsWrong(_Corrector):
    """Acts on the verified version, but stores as its correction of a contradicted memory the
    old, wrong fact with the citations re-anchored (a correction that repeats the stale value)."""

    name = "mutant:corrects-wrong"

    def correct(self, session: AgentSession, memory: Memory, draft: MemoryDraft, contradicted: bool) -> None:
        session.tools.store_draft(replace(draft, fact=memory.fact) if contradicted else draft, supersedes=memory.id)


class _WeakVerifier(StubAgent):
    """Verifies by existence only (every cited line is there), then acts on the memory as stored:
    a weak verifier in the verify-and-correct loop. It retires what cites nothing that exists."""

    name = "mutant:weak-verifier"
    verifies = True
    role = Role.TREATMENT

    def assess(self, session: AgentSession, memory: Memory) -> Known | None:
        if memory.kind is Kind.FACT:
            for citation in memory.citations:
                lines = session.tools.lines(citation.path)
                if lines is None or citation.last_line > len(lines):
                    session.tools.refuse(memory, f"{citation} is not there")
                    session.tools.retire(memory, f"{self.name}: {citation} is not there")
                    return None
        return Known(memory, memory.citations, memory.fact, used=memory, validated=True)

    def settle(self, session: AgentSession, known: Known) -> None:
        session.tools.refresh(known.memory)


class _RetiresEverything(StubAgent):
    """Retires every memory it is handed, and works as if it had none."""

    name = "mutant:retires-everything"
    verifies = True
    role = Role.TREATMENT

    def assess(self, session: AgentSession, memory: Memory) -> Known | None:
        session.tools.refuse(memory, "retires everything")
        session.tools.retire(memory, "retires everything")
        return None


@dataclass(frozen=True)
class AgentMutant:
    """A broken jit-verify: what it breaks, and the metric that must tell it apart from jit-verify."""

    name: str
    breaks: str
    told_by: str
    factory: type[StubAgent]


AGENT_MUTANTS: dict[str, AgentMutant] = {
    m.name: m
    for m in (
        AgentMutant("claims-memory", "says it uses memory, ignores it", "task_success_rate", _ClaimsMemory),
        AgentMutant("unverified", "uses memory without verifying it", "stale_use_rate", _Unverified),
        AgentMutant("ignores-verdict", "verifies, then ignores the verdict", "detection_recall", _IgnoresVerdict),
        AgentMutant("never-corrects", "never stores a correction", "self_heal_rate", _NeverCorrects),
        AgentMutant("corrects-wrong", "its corrections repeat the wrong value", "self_heal_rate", _CorrectsWrong),
        AgentMutant(
            "retires-everything", "retires every memory it is handed", "false_invalidation_rate", _RetiresEverything
        ),
        AgentMutant("weak-verifier", "verifies only that cited lines exist", "task_success_rate", _WeakVerifier),
    )
}


def make_agent_mutant(name: str, params: Mapping[str, str] | StubParams | None = None) -> StubAgent:
    """The agent mutant ``name`` (the agent spec ``mutant:NAME``), with the stubs' parameters."""
    return AGENT_MUTANTS[name].factory(params)


def mutant_agent(argument: str, runtime: object) -> StubAgent:
    """The ``mutant:`` agent scheme's factory (`memstore.harness.run.boundary.agents.AGENT_SCHEMES`):
    ``NAME`` or ``NAME[searches=1,...]``."""
    name, params = split_params(argument)
    if name not in AGENT_MUTANTS:
        raise ConfigurationError(f"unknown agent mutant {name!r}; known: {', '.join(AGENT_MUTANTS)}")
    return make_agent_mutant(name, params)


mutant_agent.takes_params = True  # type: ignore[attr-defined]  # ``mutant:NAME[searches=1]``: the stubs' parameters
