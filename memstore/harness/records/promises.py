"""The promises of the store contract the harness checks on every run (docs/design.md, "The store
protocol"): each is a contract metric, counted by the run's audit of the store
(`memstore.harness.run.play.audit`), and a gate that fails the run when the count is not 0.

`Breaches` is the one place they are written: one field per promise, in the order of the
sessions table's columns, each carrying its label and sentences; `PROMISES` is read off it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["CONTRACT_COLUMNS", "EXPIRY_PROMISES", "LEAK_PROMISES", "PROMISES", "Breaches", "Chances", "Promise"]


@dataclass(frozen=True)
class Promise:
    """One promise of the store contract: the contract metric that counts its breaches, and the
    sentence its gate says."""

    metric: str
    label: str
    says: str
    chance: str = ""  # what a session must do for the store to be able to break it (the gate's "exercised")


def _promise(label: str, says: str, *, chance: str) -> Any:
    """A field of `Breaches`: a count of breaches (0 by default) and its promise's words."""
    return field(default=0, metadata={"label": label, "says": says, "chance": chance})


@dataclass(frozen=True)
class Breaches:
    """A session's breaches of each promise of the store contract, counted by the run's audit."""

    forgotten: int = _promise(
        "forgot",
        "recent() returns every live memory the user may see, up to the limit",
        chance="a recent() list that should hold a live memory",
    )
    unkept_writes: int = _promise(
        "unkept",
        "a write the store acknowledged is kept",
        chance="a write to read back",
    )
    lost_memories: int = _promise(
        "lost",
        "a live memory is never lost before it expires",
        chance="a live memory to look up at a session's start",
    )
    unsuperseded: int = _promise(
        "unsuperseded",
        "a correction supersedes the version it corrects",
        chance="a correction of a memory",
    )
    superseded_returned: int = _promise(
        "superseded",
        "a superseded version is never handed out",
        chance="a list handed out while a superseded version exists",
    )
    retired_returned: int = _promise(
        "retired",
        "a retired memory is never handed out again",
        chance="a retired memory, or a list handed out while one exists",
    )
    refresh_ignored: int = _promise(
        "refresh",
        "refresh() restarts a memory's expiry window",
        chance="a refresh of a live memory",
    )
    expired_returned: int = _promise(
        "expired",
        "an expired memory is never handed out",
        chance="a memory that expired",
    )
    order_breaches: int = _promise(
        "order",
        "recent() is newest first, so the limit keeps the newest",
        chance="a recent() list that should hold two memories or more",
    )
    altered_memories: int = _promise(
        "altered",
        "a memory comes back as it was stored (subject, fact, citations)",
        chance="a memory read back",
    )
    scope_leaks: int = _promise(
        "scope",
        "a repository's facts reach only users who may read that repository",
        chance="a list handed to a user while a fact of a repository they may not read exists",
    )
    preference_leaks: int = _promise(
        "prefs",
        "a preference reaches only its author",
        chance="a list handed to a user while another user's preference exists",
    )
    surface_leaks: int = _promise(
        "review",
        "the code-review surface gets repository facts only, never preferences",
        chance="a list on the code-review surface for a user who has a preference",
    )
    get_leaks: int = _promise(
        "get()",
        "get() shows nothing to a user who may not see it",
        chance="a live memory looked up as a user with no access",
    )
    permission_breaches: int = _promise(
        "perms",
        "a repository fact is written, corrected or retired only with WRITE access",
        chance="a write, correction or retirement by a user without WRITE access",
    )

    @property
    def leaks(self) -> int:
        """Breaches of the promises that keep a memory from whom may not see it."""
        return sum(getattr(self, name) for name in LEAK_PROMISES)

    @property
    def expiry_violations(self) -> int:
        """Breaches of the promises of expiry."""
        return sum(getattr(self, name) for name in EXPIRY_PROMISES)


@dataclass(frozen=True)
class Chances:
    """The occasions a session gave the store to break each promise (what makes its gate exercised),
    by promise, those with none left out; one column, written ``forgotten=3;get_leaks=5``."""

    counts: tuple[tuple[str, int], ...] = ()  # (promise, occasions), by name

    @classmethod
    def of(cls, counts: Mapping[str, int]) -> Chances:
        """The chances counted in ``counts`` (a promise's metric -> occasions)."""
        return cls(tuple((name, n) for name, n in sorted(counts.items()) if n))

    def written(self) -> str:
        """As a session row holds them: ``forgotten=3;get_leaks=5``."""
        return ";".join(f"{name}={n}" for name, n in self.counts)

    @classmethod
    def read(cls, text: object) -> Chances:
        """`written` read back ("" or a missing value: no chance)."""
        found: dict[str, int] = {}
        for part in text.split(";") if isinstance(text, str) else ():
            name, _, n = part.partition("=")
            if name and n.isdigit():
                found[name] = found.get(name, 0) + int(n)
        return cls.of(found)


PROMISES: tuple[Promise, ...] = tuple(Promise(f.name, **f.metadata) for f in fields(Breaches))
CONTRACT_COLUMNS = tuple(p.metric for p in PROMISES)  # the contract's columns of the sessions table, in order
LEAK_PROMISES = ("scope_leaks", "preference_leaks", "surface_leaks", "get_leaks")
EXPIRY_PROMISES = ("expired_returned", "refresh_ignored")
