"""The promises of the store contract the harness checks on every run (docs/design.md, "The store
protocol"): each is a contract metric, counted by the run's audit of the store
(`memstore.harness.run.audit`), and a gate that fails the run when the count is not 0."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EXPIRY_PROMISES", "LEAK_PROMISES", "PROMISES", "Promise"]


@dataclass(frozen=True)
class Promise:
    """One promise of the store contract: the contract metric that counts its breaches, and the
    sentence its gate says."""

    metric: str
    label: str
    says: str


PROMISES: tuple[Promise, ...] = (
    Promise("forgotten", "forgot", "recent() returns every live memory the user may see, up to the limit"),
    Promise("unkept_writes", "unkept", "a write the store acknowledged is kept"),
    Promise("lost_memories", "lost", "a live memory is never lost before it expires"),
    Promise("unsuperseded", "unsuperseded", "a correction supersedes the version it corrects"),
    Promise("superseded_returned", "superseded", "a superseded version is never handed out"),
    Promise("retired_returned", "retired", "a retired memory is never handed out again"),
    Promise("refresh_ignored", "refresh", "refresh() restarts a memory's expiry window"),
    Promise("expired_returned", "expired", "an expired memory is never handed out"),
    Promise("order_breaches", "order", "recent() is newest first, so the limit keeps the newest"),
    Promise("altered_memories", "altered", "a memory comes back as it was stored (subject, fact, citations)"),
    Promise("scope_leaks", "scope", "a repository's facts reach only users who may read that repository"),
    Promise("preference_leaks", "prefs", "a preference reaches only its author"),
    Promise("surface_leaks", "review", "the code-review surface gets repository facts only, never preferences"),
    Promise("get_leaks", "get()", "get() shows nothing to a user who may not see it"),
    Promise(
        "permission_breaches", "perms", "a repository fact is written, corrected or retired only with WRITE access"
    ),
)
LEAK_PROMISES = ("scope_leaks", "preference_leaks", "surface_leaks", "get_leaks")
EXPIRY_PROMISES = ("expired_returned", "refresh_ignored")
