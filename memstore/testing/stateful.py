"""A hypothesis state machine that checks a store against a small model of the rules.

Random sequences of store, correct, recent, get, refresh, retire, delete, history,
clock advances, sweeps and access changes run over several users and repositories,
each checked against an independent model of the rules in docs/store.md. After every step, for
every user, repository and surface, `recent()` must return exactly what the model says:
no memory reaches someone not entitled to it, no expired memory comes back, no live
one is lost.

Use it for any store::

    from memstore.testing.stateful import state_machine_for
    TestMyStore = state_machine_for(my_factory).TestCase
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from memstore.access import Access, AccessPolicy, Actor
from memstore.clock import FakeClock
from memstore.errors import Conflict, NotFound, PermissionDenied, ValidationError
from memstore.model import Kind, Memory, MemoryDraft, Status, Surface
from memstore.store import MemoryStore
from memstore.testing._world import StoreFactory

__all__ = ["StoreStateMachine", "state_machine_for"]

USERS = ("ana", "ben", "cy")
REPOS = ("acme/api", "acme/web", "other/lib")
EXPIRY = timedelta(days=28)
STEPS = [timedelta(microseconds=1), timedelta(hours=5), timedelta(days=1), timedelta(days=9), timedelta(days=28)]


@dataclass
class _Record:
    memory: Memory
    root: str


@dataclass
class _Model:
    """The rules, written out again independently of `memstore.access` and the backends."""

    levels: dict[tuple[str, str], Access] = field(default_factory=dict)
    records: dict[str, _Record] = field(default_factory=dict)
    chain_refreshed: dict[str, datetime] = field(default_factory=dict)

    def level(self, user: str, repo: str) -> Access:
        return self.levels.get((user, repo), Access.NONE)

    def alive(self, memory_id: str, now: datetime) -> _Record | None:
        record = self.records.get(memory_id)
        if record is None or now >= self.chain_refreshed[record.root] + EXPIRY:
            return None
        return record

    def visible(self, user: str, memory_id: str, now: datetime) -> Memory | None:
        record = self.alive(memory_id, now)
        if record is None:
            return None
        memory = record.memory
        if memory.kind is Kind.PREFERENCE:
            return memory if memory.author == user else None
        return memory if self.level(user, memory.repo) >= Access.READ else None

    def recent(self, user: str, repo: str, surface: Surface, now: datetime, limit: int) -> list[Memory]:
        found = []
        for record in self.records.values():
            memory = record.memory
            if memory.status is not Status.ACTIVE or self.alive(memory.id, now) is None:
                continue
            if memory.kind is Kind.FACT and memory.repo == repo and self.level(user, repo) >= Access.READ:
                found.append(memory)
            if memory.kind is Kind.PREFERENCE and memory.author == user and surface is not Surface.CODE_REVIEW:
                found.append(memory)
        found.sort(key=lambda m: (m.refreshed_at, m.created_at, m.id), reverse=True)
        return found[:limit]

    def chain(self, root: str) -> list[Memory]:
        members = [r.memory for r in self.records.values() if r.root == root]
        return sorted(members, key=lambda m: (m.created_at, m.id))

    def set(self, memory: Memory) -> None:
        self.records[memory.id].memory = memory


def _summary(memories: list[Memory]) -> list[tuple[str, Status, datetime]]:
    return [(m.id, m.status, m.refreshed_at) for m in memories]


class StoreStateMachine(RuleBasedStateMachine):
    """Subclass with a ``factory`` (or use `state_machine_for`)."""

    factory: StoreFactory

    def __init__(self) -> None:
        super().__init__()
        self.clock = FakeClock()
        self.policy = AccessPolicy()
        self.model = _Model()
        self.target: MemoryStore = type(self).factory(self.policy, self.clock, EXPIRY)
        self.serial = 0

    def _grant(self, user: str, repo: str, level: Access) -> None:
        self.policy.grant(user, repo, level)
        self.model.levels[(user, repo)] = level

    @initialize(levels=st.lists(st.sampled_from(list(Access)), min_size=9, max_size=9))
    def grant_access(self, levels: list[Access]) -> None:
        pairs = [(u, r) for u in USERS for r in REPOS]
        for (user, repo), level in zip(pairs, levels, strict=True):
            self._grant(user, repo, level)

    def _known_id(self, data: st.DataObject) -> str:
        ids = sorted(self.model.records)
        return data.draw(st.sampled_from([*ids, "mem_unknown"]) if ids else st.just("mem_unknown"))

    def _expect(self, expected: type[Exception] | None, action: object) -> object:
        if expected is None:
            return action()  # type: ignore[operator]
        try:
            action()  # type: ignore[operator]
        except expected:
            return None
        raise AssertionError(f"expected {expected.__name__}")

    # -- writes ---------------------------------------------------------------------

    @rule(
        data=st.data(),
        user=st.sampled_from(USERS),
        repo=st.sampled_from(REPOS),
        kind=st.sampled_from(list(Kind)),
        surface=st.sampled_from(list(Surface)),
        correct=st.booleans(),
    )
    def store_memory(
        self, data: st.DataObject, user: str, repo: str, kind: Kind, surface: Surface, correct: bool
    ) -> None:
        now = self.clock.now()
        self.serial += 1
        citations = ("src/app.py:3",) if kind is Kind.FACT else ()
        draft = MemoryDraft(repo, kind, f"subject {self.serial}", f"fact {self.serial}", citations, "why")
        target = self._known_id(data) if correct else None
        expected: type[Exception] | None = None
        old: Memory | None = None
        if (kind is Kind.PREFERENCE and surface is Surface.CODE_REVIEW) or (
            kind is Kind.FACT and self.model.level(user, repo) < Access.WRITE
        ):
            expected = PermissionDenied
        elif target is not None:
            old = self.model.visible(user, target, now)
            if old is None:
                expected = NotFound
            elif old.repo != repo or old.kind is not kind:
                expected = ValidationError
            elif old.kind is Kind.FACT and self.model.level(user, repo) < Access.WRITE:
                expected = PermissionDenied
            elif old.status is not Status.ACTIVE:
                expected = Conflict
        made = self._expect(
            expected, lambda: self.target.store(draft, actor=Actor(user), surface=surface, supersedes=target)
        )
        if expected is not None:
            return
        assert isinstance(made, Memory)
        assert (made.author, made.repo, made.kind, made.status) == (user, repo, kind, Status.ACTIVE)
        assert made.created_at == made.refreshed_at == now
        assert made.id not in self.model.records
        root = made.id
        if old is not None:
            root = self.model.records[old.id].root
            self.model.set(Memory(**{**old.__dict__, "status": Status.SUPERSEDED}))
            assert made.supersedes == old.id
        self.model.records[made.id] = _Record(made, root)
        self.model.chain_refreshed[root] = now

    @rule(data=st.data(), user=st.sampled_from(USERS))
    def refresh(self, data: st.DataObject, user: str) -> None:
        memory_id = self._known_id(data)
        now = self.clock.now()
        memory = self.model.visible(user, memory_id, now)
        expected = NotFound if memory is None else None if memory.status is Status.ACTIVE else Conflict
        got = self._expect(expected, lambda: self.target.refresh(memory_id, actor=Actor(user)))
        if expected is None and memory is not None:
            assert isinstance(got, Memory)
            assert got.refreshed_at == now
            self.model.set(Memory(**{**memory.__dict__, "refreshed_at": now}))
            self.model.chain_refreshed[self.model.records[memory_id].root] = now

    @rule(data=st.data(), user=st.sampled_from(USERS))
    def retire(self, data: st.DataObject, user: str) -> None:
        memory_id = self._known_id(data)
        memory = self.model.visible(user, memory_id, self.clock.now())
        expected: type[Exception] | None = None
        if memory is None:
            expected = NotFound
        elif memory.kind is Kind.FACT and self.model.level(user, memory.repo) < Access.WRITE:
            expected = PermissionDenied
        elif memory.status is not Status.ACTIVE:
            expected = Conflict
        self._expect(expected, lambda: self.target.retire(memory_id, actor=Actor(user), reason="stale"))
        if expected is None and memory is not None:
            self.model.set(Memory(**{**memory.__dict__, "status": Status.RETIRED, "retired_reason": "stale"}))

    @rule(data=st.data(), user=st.sampled_from(USERS))
    def delete(self, data: st.DataObject, user: str) -> None:
        memory_id = self._known_id(data)
        memory = self.model.visible(user, memory_id, self.clock.now())
        expected: type[Exception] | None = None
        if memory is None:
            expected = NotFound
        elif memory.kind is Kind.FACT and self.model.level(user, memory.repo) < Access.ADMIN:
            expected = PermissionDenied
        self._expect(expected, lambda: self.target.delete(memory_id, actor=Actor(user)))
        if expected is None:
            root = self.model.records[memory_id].root
            for member in self.model.chain(root):
                del self.model.records[member.id]
            del self.model.chain_refreshed[root]

    @rule(user=st.sampled_from(USERS), repo=st.sampled_from(REPOS), level=st.sampled_from(list(Access)))
    def change_access(self, user: str, repo: str, level: Access) -> None:
        self._grant(user, repo, level)

    @rule(step=st.sampled_from(STEPS))
    def advance_clock(self, step: timedelta) -> None:
        self.clock.advance(step)

    @rule(data=st.data(), before=st.booleans())
    def advance_to_an_expiry_boundary(self, data: st.DataObject, before: bool) -> None:
        """Jump to the instant a chain expires (or one microsecond before): where bugs hide."""
        now = self.clock.now()
        ends = sorted(at + EXPIRY for at in self.model.chain_refreshed.values() if at + EXPIRY > now)
        if ends:
            end = data.draw(st.sampled_from(ends))
            self.clock.set(end - timedelta(microseconds=1) if before and end > now else end)

    @rule()
    def sweep(self) -> None:
        now = self.clock.now()
        dead = [root for root, at in self.model.chain_refreshed.items() if now >= at + EXPIRY]
        expected = 0
        for root in dead:
            for member in self.model.chain(root):
                del self.model.records[member.id]
                expected += 1
            del self.model.chain_refreshed[root]
        assert self.target.sweep() == expected

    # -- reads ----------------------------------------------------------------------

    @rule(data=st.data(), user=st.sampled_from(USERS))
    def get_and_history(self, data: st.DataObject, user: str) -> None:
        memory_id = self._known_id(data)
        memory = self.model.visible(user, memory_id, self.clock.now())
        if memory is None:
            self._expect(NotFound, lambda: self.target.get(memory_id, actor=Actor(user)))
            self._expect(NotFound, lambda: self.target.history(memory_id, actor=Actor(user)))
            return
        assert self.target.get(memory_id, actor=Actor(user)) == memory
        chain = self.model.chain(self.model.records[memory_id].root)
        assert _summary(self.target.history(memory_id, actor=Actor(user))) == _summary(chain)

    @rule(
        user=st.sampled_from(USERS),
        repo=st.sampled_from(REPOS),
        surface=st.sampled_from(list(Surface)),
        limit=st.integers(1, 4),
    )
    def recent_with_limit(self, user: str, repo: str, surface: Surface, limit: int) -> None:
        got = self.target.recent(repo, actor=Actor(user), surface=surface, limit=limit)
        assert _summary(got) == _summary(self.model.recent(user, repo, surface, self.clock.now(), limit))

    @invariant()
    def everyone_sees_exactly_what_they_may(self) -> None:
        now = self.clock.now()
        for user in USERS:
            for repo in REPOS:
                for surface in (Surface.CLI, Surface.CODE_REVIEW):
                    got = self.target.recent(repo, actor=Actor(user), surface=surface, limit=1000)
                    want = self.model.recent(user, repo, surface, now, 1000)
                    assert _summary(got) == _summary(want), (user, repo, surface)


def state_machine_for(factory: StoreFactory) -> type[StoreStateMachine]:
    """A `StoreStateMachine` subclass that tests the stores ``factory`` builds."""
    return type("StoreStateMachineFor", (StoreStateMachine,), {"factory": staticmethod(factory)})
