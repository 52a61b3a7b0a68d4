"""The kinds of event a session records, one vocabulary for the tools, the harness and scoring."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["EventKind"]


class EventKind(StrEnum):
    """What happened, as a row of ``events.csv`` says it.

    The agent's tools record what it did; the harness records what it saw (expiry, the store's
    breaches of its contract, tampering) and what it found by comparing actions with the grading data (``misled``).
    """

    # handed and judged
    RETRIEVE = "retrieve"  # a memory handed to the session (detail: its position)
    VERDICT = "verdict"  # the verifier's verdict on a memory (detail: `Verdict.summary`, flagged instructions too)
    USE = "use"  # the agent says it relied on a memory (recorded, never scored)
    REFUSE = "refuse"  # the agent refused a memory
    REANCHOR = "reanchor"  # the verifier put a memory's citations where they stand now
    # written to the store
    STORE = "store"
    CORRECT = "correct"  # a new version superseding a memory (detail: the old id)
    REFRESH = "refresh"
    RETIRE = "retire"
    VOTE = "vote"  # the agent voted on a memory (detail: "up: REASON" or "down: REASON")
    DENIED = "denied"  # the store refused an operation (no write access, bad input)
    # the work
    EDIT = "edit"
    FINDING = "finding"
    ANSWER = "answer"
    MERGE = "merge"
    AGENT_ERROR = "agent_error"
    INFRA_ERROR = "infra_error"  # not the agent's work: a timeout, a model endpoint that failed
    # the harness's own observations
    EXPIRED = "expired"
    TAMPERED = "tampered"
    BREACH = "breach"  # the store broke a promise of its contract (detail: "promise: what the audit saw")
    MISLED = "misled"  # an action repeated this memory's error
    PLANTED = "planted"  # a memory handed carries instructions planted for the agent (grading data, read after it)
