"""The built-in agents: deterministic programs over their tools, stand-ins for real agents.

A stub acts only on what it is handed (the task as an agent sees it, the memories the store
returned) and what it reads through its tools. It never sees the expected change, the merge
check, the expected findings or answer, or any memory's truth.

Unaided, a stub explores: it searches the working copy for the task's subject, follows the
value it finds to the other places that value is kept, reads the files, and acts. Exploration
is bounded by a budget, each agent's own parameters (`StubParams`): ``searches`` (greps of the working copy, default 2:
one for the subject's name, one for the value found there) and ``reads`` (files opened,
default 8: every place a setting is kept in this library, not a sweep of the repository).
These are modelling choices, not measurements; the README shows how results move with them.
An arm sets them in its agent spec (``jit-verify[reads=4]``).

With memory, a stub acts on the memories it finds relevant (they share words with the task,
or cite a file the pull request changes) and does not explore what they cover:

- ``trusting`` believes memories as they are stored but reads the code they cite: it edits the
  lines a memory cites when the line at the stored number still names what it named (a citation
  that moved is left out, and it looks for that place itself), answers with the value the fact
  states (a stale fact gives a stale answer), flags the files a memory ties to the changed ones,
  and follows instructions such as "never edit the docs".
- ``blind-trusting``, the harm probe, does the same without reading the cited lines: a citation
  that moved sends its edit to whatever line now has that number (the worst case).
- ``jit-verify`` verifies every memory first (the seeds' loop): it acts on re-anchored
  citations and corrected values, stores the corrections, retires what has nothing behind
  it or carries instructions to the reader, refreshes what it validated and used, and
  explores what no usable memory covers.
- ``no-memory`` is handed nothing and reads nothing from the store: the control.

Both memory-using stubs store, after a task, what they found by exploring (the write path).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from pathlib import PurePosixPath

from memstore.agents import craft
from memstore.agents.params import StubParams
from memstore.agents.program import Known, Program
from memstore.harness.records import EventKind, Role
from memstore.harness.run import AgentSession
from memstore.model import Citation, Kind, Memory, MemoryDraft
from memstore.verify import Verdict, VerdictStatus, terms

__all__ = [
    "BlindTrustingAgent",
    "JitVerifyAgent",
    "NoMemoryAgent",
    "StubParams",
    "TrustingAgent",
    "refused_for_instructions",
]


def _relevant(session: AgentSession, known: Known) -> bool:
    """Whether a memory bears on the task, by the task's own words (never the answer key): it
    cites a file the pull request changes; or, when the task names code (``RETRY_LIMIT_3``), it
    names that code too; or else it shares two words with the task."""
    task = session.task
    if task.pull_request is not None and {c.path for c in known.citations} & set(task.pull_request.changed_files):
        return True
    named = craft.identifiers(task.words())
    if named:
        return bool(named & _names(known))
    return len(terms(task.words()) & terms(f"{known.memory.subject} {known.fact}")) >= 2


def _names(known: Known) -> frozenset[str]:
    """The code names a memory gives: its fact's, and its subject's but for a module the subject
    only places the name in (``__version__`` in "__title__ in __version__", a cited file's module:
    it does not stand for a constant of that module)."""
    return _names_of(known.memory.subject, known.fact, tuple(c.path for c in known.citations))


@lru_cache(maxsize=1 << 14)
def _names_of(subject: str, fact: str, paths: tuple[str, ...]) -> frozenset[str]:
    """`_names` kept by text, as `craft.identifiers` is: asked of the same memories all session long."""
    places = {PurePosixPath(path).stem for path in paths}
    return craft.subject_names(subject, places) | craft.identifiers(fact)


def _named(session: AgentSession, known: Known) -> int:
    """How many of the code names the task gives a memory names too (``SURE_NO`` before
    ``SURE_YES`` for a question about ``CharDistributionAnalysis.SURE_NO``)."""
    return len(craft.identifiers(session.task.words()) & _names(known))


def _overlap(session: AgentSession, known: Known) -> int:
    return len(terms(session.task.words()) & terms(f"{known.memory.subject} {known.fact}"))


class StubAgent:
    """The program the stubs share; they differ in how they assess a memory."""

    name = "stub"
    uses_memory = True
    simulated = True  # a deterministic program standing in for a real agent: every report says so

    def __init__(self, params: Mapping[str, str] | StubParams | None = None) -> None:
        """``params``: the parameters the agent's spec carries (strings), or a `StubParams`."""
        if isinstance(params, StubParams):
            self.config = params
        else:
            self.config = StubParams.parse(params or {}, agent=self.name)

    @property
    def params(self) -> dict[str, object]:
        """The parameters it runs with (the run's results record them for its arm)."""
        return self.config.as_dict()

    def assess(self, session: AgentSession, memory: Memory) -> Known | None:
        raise NotImplementedError

    def settle(self, session: AgentSession, known: Known) -> None:
        """After a memory was used: nothing by default."""

    def work(self, session: AgentSession) -> None:
        knowledge = [k for m in session.memories if (k := self.assess(session, m)) is not None]
        relevant = sorted(
            (k for k in knowledge if _relevant(session, k)), key=lambda k: (-_named(session, k), -_overlap(session, k))
        )
        for known in relevant:
            if known.used is not None:
                session.tools.use(known.used)
            self.settle(session, known)
        skips = [w for k in knowledge for w in craft.instruction_skips(k.fact)]
        Program(session, self.config, relevant, skips, learn=self.uses_memory and self.config.learn).run()


class NoMemoryAgent(StubAgent):
    """Memory switched off: the control arm."""

    name = "no-memory"
    uses_memory = False
    role = Role.CONTROL

    def assess(self, session: AgentSession, memory: Memory) -> Known | None:
        return None


class TrustingAgent(StubAgent):
    """Trusts what it is given but reads the code it cites: a citation is followed when the line
    at the stored number still names what it named when it was stored (the same key), and left
    out otherwise (the agent then looks for that place itself). The fact is believed as stored:
    a stale value, an abandoned branch's value, an adversarial claim, an instruction."""

    name = "trusting"
    role = Role.HARM_PROBE

    def assess(self, session: AgentSession, memory: Memory) -> Known | None:
        cited = tuple(c for c in memory.citations if _still_names(session, c))
        return Known(memory, cited, memory.fact, used=memory, left_out=len(memory.citations) - len(cited))


class BlindTrustingAgent(StubAgent):
    """The harm probe: uses what it is given exactly as stored, without reading the cited lines
    (a citation that moved sends its edit to whatever line now has that number). The worst case
    of memory used unverified, not a model of a careful agent."""

    name = "blind-trusting"
    role = Role.HARM_PROBE

    def assess(self, session: AgentSession, memory: Memory) -> Known | None:
        return Known(memory, memory.citations, memory.fact, used=memory)


def refused_for_instructions(session: AgentSession, memory: Memory, verdict: Verdict, agent: str) -> bool:
    """Refuse and retire a memory that carries instructions to the reader (`Verdict.instructions`),
    whatever the code says of the rest of it: a planted order is never followed, nor kept for the
    next agent. False for a memory that carries none."""
    if not verdict.instructions:
        return False
    kinds = ", ".join(dict.fromkeys(i.kind.value for i in verdict.instructions))
    session.tools.refuse(memory, f"it carries instructions to the reader: {kinds}")
    session.tools.retire(memory, f"{agent}: it carries instructions to the reader ({kinds})")
    return True


def _still_names(session: AgentSession, citation: Citation) -> bool:
    """Whether the line at a citation's stored number names what the cited text named: the key
    it gave a value (``RETRY_LIMIT_3``), or else one of the identifiers it held. A citation
    without its text is taken on trust."""
    lines = session.tools.lines(citation.path)
    if not lines or not 1 <= citation.line <= len(lines):
        return False
    if not citation.snippet:
        return True
    then, now = citation.snippet.split("\n")[0], lines[citation.line - 1]  # a snippet's lines are joined by \n
    was, is_ = craft.definition(then), craft.definition(now)
    if was is not None:
        return is_ is not None and craft.same_name(is_.key, was.key)
    return then.strip() == now.strip() or bool(craft.identifiers(then) & craft.identifiers(now))


class JitVerifyAgent(StubAgent):
    """Verify before use; correct, re-anchor, retire, refresh (the seeds' loop)."""

    name = "jit-verify"
    role = Role.TREATMENT
    verifies = True  # it verifies each memory before use: the run holds it to the verifier's bars

    def assess(self, session: AgentSession, memory: Memory) -> Known | None:
        if memory.kind is Kind.PREFERENCE:
            return Known(memory, memory.citations, memory.fact, used=memory)
        tools = session.tools
        verdict = tools.verify(memory)
        if refused_for_instructions(session, memory, verdict, self.name):
            return None
        if verdict.status is VerdictStatus.VALID:
            return Known(memory, memory.citations, memory.fact, used=memory, validated=True)
        if verdict.corrected is not None and verdict.status in {VerdictStatus.REANCHORED, VerdictStatus.CONTRADICTED}:
            draft: MemoryDraft = verdict.corrected
            if verdict.status is VerdictStatus.CONTRADICTED:
                tools.refuse(memory, f"contradicted: {verdict.reason}")  # the old claim is not used; its correction is
            cited = tuple(c for c in draft.citations if isinstance(c, Citation))
            tools.record(EventKind.REANCHOR, memory.id, ";".join(str(c) for c in cited))
            stored = tools.store_draft(draft, supersedes=memory.id)
            return Known(memory, cited, draft.fact, used=stored)
        tools.refuse(memory, f"{verdict.status.value}: {verdict.reason}")
        tools.retire(memory, f"jit-verify: {verdict.reason}")
        return None

    def settle(self, session: AgentSession, known: Known) -> None:
        if known.validated:  # validated and used: keep it alive, and say it held where votes count
            session.tools.refresh(known.memory)
            session.tools.vote(known.memory, up=True, reason="jit-verify: verified against the code, and used")
