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
    chance: str = ""  # what a session must do for the store to be able to break it (the gate's "exercised")


PROMISES: tuple[Promise, ...] = (
    Promise(
        "forgotten",
        "forgot",
        "recent() returns every live memory the user may see, up to the limit",
        chance="a recent() list that should hold a live memory",
    ),
    Promise("unkept_writes", "unkept", "a write the store acknowledged is kept", chance="a write to read back"),
    Promise(
        "lost_memories",
        "lost",
        "a live memory is never lost before it expires",
        chance="a live memory to look up at a session's start",
    ),
    Promise(
        "unsuperseded",
        "unsuperseded",
        "a correction supersedes the version it corrects",
        chance="a correction of a memory",
    ),
    Promise(
        "superseded_returned",
        "superseded",
        "a superseded version is never handed out",
        chance="a list handed out while a superseded version exists",
    ),
    Promise(
        "retired_returned",
        "retired",
        "a retired memory is never handed out again",
        chance="a retired memory, or a list handed out while one exists",
    ),
    Promise(
        "refresh_ignored", "refresh", "refresh() restarts a memory's expiry window", chance="a refresh of a live memory"
    ),
    Promise("expired_returned", "expired", "an expired memory is never handed out", chance="a memory that expired"),
    Promise(
        "order_breaches",
        "order",
        "recent() is newest first, so the limit keeps the newest",
        chance="a recent() list that should hold two memories or more",
    ),
    Promise(
        "altered_memories",
        "altered",
        "a memory comes back as it was stored (subject, fact, citations)",
        chance="a memory read back",
    ),
    Promise(
        "scope_leaks",
        "scope",
        "a repository's facts reach only users who may read that repository",
        chance="a list handed to a user while a fact of a repository they may not read exists",
    ),
    Promise(
        "preference_leaks",
        "prefs",
        "a preference reaches only its author",
        chance="a list handed to a user while another user's preference exists",
    ),
    Promise(
        "surface_leaks",
        "review",
        "the code-review surface gets repository facts only, never preferences",
        chance="a list on the code-review surface for a user who has a preference",
    ),
    Promise(
        "get_leaks",
        "get()",
        "get() shows nothing to a user who may not see it",
        chance="a live memory looked up as a user with no access",
    ),
    Promise(
        "permission_breaches",
        "perms",
        "a repository fact is written, corrected or retired only with WRITE access",
        chance="a write, correction or retirement by a user without WRITE access",
    ),
)
LEAK_PROMISES = ("scope_leaks", "preference_leaks", "surface_leaks", "get_leaks")
EXPIRY_PROMISES = ("expired_returned", "refresh_ignored")
