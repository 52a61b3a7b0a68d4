"""The harness's audit of a trial's store: every promise of the store contract, checked.

Written from docs/design.md's rules and the scenario alone, apart from any store's code, so
that a store that breaks a rule is caught rather than trusted. The audit keeps its own
account of the store: what was written (the drafts as asked, by whom), what is live, what was
corrected, retired or refreshed and when, and which memories have expired. Against it, it
checks what the store says:

- every list the store hands out (to the agent, or to the audit's own ``recent()`` probe, made
  each session as the session's user): nothing the user may not see, nothing retired,
  superseded or expired, every memory as it was stored, and for ``recent()`` every live memory
  it may show, newest first, up to the limit;
- after each write: that it was kept, that it needed the access it had, that a correction
  superseded what it corrected, that a retirement took the memory out of use, that a refresh
  restarted its expiry window;
- each session: that ``get()`` hides every memory from a user with no access (an outsider),
  that expired memories are gone and live ones are not.

Each check is also a *chance*: an occasion on which the store could have broken a promise (a
list handed out while a retired memory exists, a correction to supersede, a lookup by an
outsider). A promise with no chance in a run was not exercised: its gate says so instead of
passing (`memstore.harness.report.builtin_gates`).

Each breach is a `Breach` of one named promise (`memstore.harness.records`): a contract metric in the results
and a gate of the run. A breach is counted once per promise and memory in a trial, and the
audit then follows the store (a correction that did not supersede leaves the old version
live in the audit's account too), so one broken promise does not show up as another.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from memstore.access import Access, AccessPolicy, Actor
from memstore.errors import MemstoreError, NotFound, PermissionDenied
from memstore.harness.records import PROMISE, PROMISES, Breaches, Chances, EventKind
from memstore.harness.world import World
from memstore.model import Citation, Kind, Memory, MemoryDraft, Status, Surface

__all__ = ["OUTSIDER", "Breach", "StoreAudit", "breach_counts", "entitled"]

OUTSIDER = "memstore-audit-outsider"  # a user with no access anywhere: get() must show them nothing


@dataclass(frozen=True)
class Breach:
    """A promise the store broke, on one memory (``memory_id`` empty for a whole list)."""

    promise: str
    memory_id: str
    detail: str

    def event(self) -> tuple[EventKind, str, str]:
        """As an event row's (kind, memory id, detail)."""
        return EventKind.BREACH, self.memory_id, f"{self.promise}: {self.detail}"


def entitled(access: AccessPolicy, memory: Memory, user: str, repo: str, surface: Surface) -> bool:
    """Whether ``user`` working on ``repo`` through ``surface`` may be shown ``memory``."""
    return _leak(access, memory, user, repo, surface) is None


def _leak(access: AccessPolicy, memory: Memory | _Record, user: str, repo: str, surface: Surface) -> str | None:
    """The leak promise that showing ``memory`` to ``user`` (on ``repo``, through ``surface``)
    would break, or None."""
    if memory.kind is Kind.PREFERENCE:
        if memory.author != user:
            return PROMISE.preference_leaks
        return PROMISE.surface_leaks if surface is Surface.CODE_REVIEW else None
    if memory.repo != repo or access.level(user, repo) < Access.READ:
        return PROMISE.scope_leaks
    return None


def _cited(citations: Iterable[Citation | str]) -> tuple[tuple[str, int, int | None], ...]:
    found = []
    for c in citations:
        parsed = Citation.parse(c) if isinstance(c, str) else c
        found.append((parsed.path, parsed.line, parsed.end_line))
    return tuple(found)


@dataclass
class _Record:
    """What the audit knows of one memory: as it was asked for, and its expiry clock."""

    id: str
    repo: str
    kind: Kind
    author: str
    subject: str
    fact: str
    citations: tuple[tuple[str, int, int | None], ...]
    created_at: datetime
    refreshed_at: datetime
    status: Status = Status.ACTIVE

    @classmethod
    def of(cls, made: Memory, draft: MemoryDraft | None, author: str, now: datetime) -> _Record:
        source = made if draft is None else draft
        return cls(
            made.id,
            source.repo,
            Kind(source.kind),
            author,
            source.subject.strip(),
            source.fact.strip(),
            _cited(source.citations),
            now,
            now,
        )

    def differs(self, memory: Memory) -> str | None:
        """How ``memory`` differs from what was stored, or None."""
        for name, mine, theirs in (
            ("repo", self.repo, memory.repo),
            ("kind", self.kind, memory.kind),
            ("author", self.author, memory.author),
            ("subject", self.subject, memory.subject.strip()),
            ("fact", self.fact, memory.fact.strip()),
            ("citations", self.citations, _cited(memory.citations)),
        ):
            if mine != theirs:
                return f"its {name} came back changed"
        return None

    def order(self) -> tuple[datetime, datetime, str]:
        return (self.refreshed_at, self.created_at, self.id)


class StoreAudit:
    """The audit's account of one trial's store, kept in step with what its sessions did."""

    def __init__(self, world: World, expiry: timedelta) -> None:
        self.world, self.expiry = world, expiry
        self.records: dict[str, _Record] = {}
        self._found: set[tuple[str, str]] = set()
        self._actors: dict[str, Actor] = {}  # each user's actor, made once (the audit asks thousands of times)
        self.chances: Counter[str] = Counter()  # occasions to break each promise, since `take_chances`
        for memories in world.seeded.values():
            for made in memories:
                record = _Record.of(made, world.drafts.get(made.id), made.author, made.created_at)
                record.refreshed_at = made.refreshed_at
                self.records[made.id] = record
        self._pending = self._kept(list(self.records))

    # -- bookkeeping --------------------------------------------------------------------

    def take_chances(self) -> Chances:
        """The chances counted since the last call (a session's), and a fresh count."""
        found = Chances.of(self.chances)
        self.chances.clear()
        return found

    def _breach(self, promise: str, memory_id: str, detail: str) -> list[Breach]:
        """A breach, once per promise and memory in a trial (a list's breach once per session)."""
        if memory_id and (promise, memory_id) in self._found:
            return []
        if memory_id:
            self._found.add((promise, memory_id))
        return [Breach(promise, memory_id, detail)]

    def _get(self, memory_id: str, user: str) -> Memory | None:
        actor = self._actors.get(user) or self._actors.setdefault(user, Actor(user))
        try:
            return self.world.store.get(memory_id, actor=actor)
        except (NotFound, PermissionDenied):
            return None

    def _live(self) -> list[_Record]:
        return [r for r in self.records.values() if r.status is Status.ACTIVE]

    def _kept(self, ids: list[str]) -> list[Breach]:
        """Each memory of ``ids`` can be read back by its author, as it was stored."""
        found: list[Breach] = []
        for memory_id in ids:
            record = self.records[memory_id]
            self.chances[PROMISE.unkept_writes] += 1
            got = self._get(memory_id, record.author)
            if got is None:
                del self.records[memory_id]  # out of the account: it was never there
                found += self._breach(PROMISE.unkept_writes, memory_id, "acknowledged, then not found")
                continue
            self.chances[PROMISE.altered_memories] += 1
            changed = record.differs(got)
            if changed:
                found += self._breach(PROMISE.altered_memories, memory_id, changed)
        return found

    # -- each session -------------------------------------------------------------------

    def begin(self) -> list[Breach]:
        """At a session's start (after the clock moved): the first session also gets what the
        seeding showed; then expiry, lost memories, and ``get()`` for an outsider."""
        found, self._pending = self._pending, []
        now = self.world.clock.now()
        for record in self._live():
            expired = now >= record.refreshed_at + self.expiry
            got = self._get(record.id, record.author)
            readable = self.world.access.level(record.author, record.repo) >= Access.READ
            if expired:
                record.status = Status.EXPIRED
                self.chances[PROMISE.expired_returned] += 1
                if got is not None:
                    found += self._breach(PROMISE.expired_returned, record.id, "expired, still returned by get()")
            elif readable:
                self.chances[PROMISE.lost_memories] += 1
                if got is None:
                    del self.records[record.id]  # out of the account: the store no longer has it
                    found += self._breach(PROMISE.lost_memories, record.id, "live, but get() no longer finds it")
            if not expired and got is not None:
                self.chances[PROMISE.get_leaks] += 1
                if self._get(record.id, OUTSIDER) is not None:
                    found += self._breach(PROMISE.get_leaks, record.id, "get() showed it to a user with no access")
        return found

    def expired_now(self) -> list[str]:
        """Memories the audit saw expire, once each (``expired`` events)."""
        newly = [
            r.id for r in self.records.values() if r.status is Status.EXPIRED and ("expired", r.id) not in self._found
        ]
        self._found |= {("expired", i) for i in newly}
        return newly

    def handed(
        self, memories: list[Memory], user: str, surface: Surface, *, limit: int | None = None, counted: bool = True
    ) -> list[Breach]:
        """What the store handed ``user`` on ``surface``; with ``limit``, a ``recent()`` list,
        which must also be every live memory the user may see, newest first. ``counted``: the
        list's chances are counted here (not when `list_chances` counted them for it)."""
        found: list[Breach] = []
        repo = self.world.scenario.repo
        kept: list[str] = []
        if counted:
            self.list_chances(user, surface)
        for memory in memories:
            leak = _leak(self.world.access, memory, user, repo, surface)
            record = self.records.get(memory.id)
            if leak is not None:
                found += self._breach(leak, memory.id, f"handed to {user} on {surface.value}")
            elif record is None:
                found += self._breach(PROMISE.altered_memories, memory.id, "a memory that was never stored")
            elif record.status is Status.SUPERSEDED:
                found += self._breach(PROMISE.superseded_returned, memory.id, "a superseded version handed out")
            elif record.status is Status.RETIRED:
                found += self._breach(PROMISE.retired_returned, memory.id, "a retired memory handed out")
            elif record.status is Status.EXPIRED:
                found += self._breach(PROMISE.expired_returned, memory.id, "an expired memory handed out")
            else:
                kept.append(memory.id)  # live: it counts for completeness and order, changed or not
                self.chances[PROMISE.altered_memories] += 1
                changed = record.differs(memory)
                if changed:
                    found += self._breach(PROMISE.altered_memories, memory.id, changed)
        if limit is not None:
            found += self._complete(kept, user, surface, limit)
        return found

    def list_chances(self, user: str, surface: Surface) -> None:
        """A list handed to ``user`` on ``surface`` is a chance to break each promise about what a
        list must not hold, for which the account has such a memory now."""
        repo, access = self.world.scenario.repo, self.world.access
        statuses = {r.status for r in self.records.values()}
        for status, promise in (
            (Status.SUPERSEDED, PROMISE.superseded_returned),
            (Status.RETIRED, PROMISE.retired_returned),
            (Status.EXPIRED, PROMISE.expired_returned),
        ):
            if status in statuses:
                self.chances[promise] += 1
        for leak in {_leak(access, r, user, repo, surface) for r in self._live()}:
            if leak is not None:
                self.chances[leak] += 1

    def _complete(self, kept: list[str], user: str, surface: Surface, limit: int) -> list[Breach]:
        repo = self.world.scenario.repo
        visible = [r for r in self._live() if _leak(self.world.access, r, user, repo, surface) is None]
        expected = [r.id for r in sorted(visible, key=_Record.order, reverse=True)][:limit]
        self.chances[PROMISE.forgotten] += len(expected)
        self.chances[PROMISE.order_breaches] += len(expected) >= 2
        if kept == expected:
            return []
        if set(kept) == set(expected) or (len(kept) == len(expected) and set(kept) <= {r.id for r in visible}):
            return [Breach(PROMISE.order_breaches, "", f"recent() for {user} was not newest first")]
        found: list[Breach] = []
        for memory_id in expected:
            if memory_id not in kept:
                found += self._breach(
                    PROMISE.forgotten, memory_id, f"live, visible to {user}, not returned by recent()"
                )
        return found

    def probe(self, user: str, surface: Surface, limit: int) -> list[Breach]:
        """The audit's own ``recent()`` as ``user`` on ``surface`` (for sessions handed nothing,
        or handed what ``search`` found)."""
        try:
            memories = self.world.store.recent(
                self.world.scenario.repo, actor=Actor(user), surface=surface, limit=limit
            )
        except MemstoreError:
            return []
        return self.handed(memories, user, surface, limit=limit)

    # -- after each session: what it wrote ------------------------------------------------

    def follow(self, kind: str, memory_id: str, detail: str, actor: Actor, draft: MemoryDraft | None) -> list[Breach]:
        """Keep the account in step with one thing a session did to the store, and check it."""
        now = self.world.clock.now()
        if kind == EventKind.DENIED and self.world.access.level(actor.user, self.world.scenario.repo) < Access.WRITE:
            self.chances[PROMISE.permission_breaches] += 1  # refused, as it must be: the promise was put to the test
        if kind in {EventKind.STORE, EventKind.CORRECT} and memory_id not in self.records:
            return self._wrote(memory_id, detail if kind == EventKind.CORRECT else None, actor, draft, now)
        record = self.records.get(memory_id)
        if record is None:
            return []
        if kind == EventKind.RETIRE:
            self.chances[PROMISE.retired_returned] += 1
            found = self._needs_write(record, actor.user, "retired")
            got = self._get(memory_id, record.author)
            if got is not None and got.status is Status.ACTIVE:
                found += self._breach(PROMISE.retired_returned, memory_id, "still active after retire()")
            record.status = Status.RETIRED
            return found
        if kind == EventKind.REFRESH and record.status is Status.ACTIVE:
            self.chances[PROMISE.refresh_ignored] += 1
            got = self._get(memory_id, record.author)
            if got is not None and got.refreshed_at < now and record.refreshed_at < now:
                record.refreshed_at = got.refreshed_at
                return self._breach(PROMISE.refresh_ignored, memory_id, "refresh() left its expiry window where it was")
            record.refreshed_at = now
        return []

    def _needs_write(self, record: _Record, user: str, done: str) -> list[Breach]:
        if record.kind is Kind.FACT and self.world.access.level(user, record.repo) < Access.WRITE:
            self.chances[PROMISE.permission_breaches] += 1
            return self._breach(PROMISE.permission_breaches, record.id, f"{done} by {user}, who has no write access")
        return []

    def _wrote(
        self, memory_id: str, corrects: str | None, actor: Actor, draft: MemoryDraft | None, now: datetime
    ) -> list[Breach]:
        self.chances[PROMISE.unkept_writes] += 1
        got = self._get(memory_id, actor.user)
        if got is None:
            return self._breach(PROMISE.unkept_writes, memory_id, "acknowledged, then not found")
        record = self.records[memory_id] = _Record.of(got, draft, actor.user, now)
        found = self._needs_write(record, actor.user, "written")
        self.chances[PROMISE.altered_memories] += 1
        changed = record.differs(got)
        if changed:
            found += self._breach(PROMISE.altered_memories, memory_id, changed)
        old = self.records.get(corrects) if corrects else None
        if old is None:
            return found
        self.chances[PROMISE.unsuperseded] += 1
        before = self._get(old.id, old.author)
        if got.supersedes != old.id or (before is not None and before.status is Status.ACTIVE):
            return found + self._breach(PROMISE.unsuperseded, old.id, f"corrected by {memory_id}, still active")
        old.status = Status.SUPERSEDED
        return found


def breach_counts(breaches: Iterable[Breach]) -> Breaches:
    """Breaches per promise of the contract (every promise counted, zeros included)."""
    counts = Counter(breach.promise for breach in breaches)
    return Breaches(**{p.metric: counts[p.metric] for p in PROMISES})
