"""The harness's own watch on a trial's store: leaks, expired memories returned, live ones lost.

Written from DESIGN.md's rules and the scenario alone, apart from the store's code, so that a
store that breaks its rules is caught rather than trusted: the watch keeps its own account of
which memories are live and when each was last refreshed, and compares the store with it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from memstore.access import Access, AccessPolicy, Actor
from memstore.errors import MemstoreError, NotFound
from memstore.harness.run.events import EventKind
from memstore.harness.world import World
from memstore.model import Kind, Memory, Surface

__all__ = ["StoreWatch", "entitled"]

Found = tuple[str, str, str]  # (event kind, memory id, detail)


def entitled(access: AccessPolicy, memory: Memory, user: str, repo: str, surface: Surface) -> bool:
    """Whether ``user`` working on ``repo`` through ``surface`` may be shown ``memory``."""
    if memory.kind is Kind.PREFERENCE:
        return memory.author == user and surface is not Surface.CODE_REVIEW
    return memory.repo == repo and access.level(user, repo) >= Access.READ


class StoreWatch:
    """What the harness expects a trial's store to hold, kept in step with what sessions did."""

    def __init__(self, world: World, expiry: timedelta) -> None:
        self.world, self.expiry = world, expiry
        self.live: dict[str, Memory] = {m.id: m for ms in world.seeded.values() for m in ms}
        self.refreshed: dict[str, datetime] = {i: m.refreshed_at for i, m in self.live.items()}
        self._reported: set[str] = set()

    def handed(self, memories: list[Memory], user: str, surface: Surface) -> list[Found]:
        """Memories handed to ``user`` that they were not entitled to, or that had expired."""
        found: list[Found] = []
        now, repo = self.world.clock.now(), self.world.scenario.repo
        for memory in memories:
            if not entitled(self.world.access, memory, user, repo, surface):
                found.append((EventKind.LEAK, memory.id, "handed to someone not entitled"))
            if now >= memory.refreshed_at + self.expiry:
                found.append((EventKind.EXPIRY_VIOLATION, memory.id, "expired memory returned"))
        return found

    def expire(self) -> list[Found]:
        """Memories the watch says have expired since last asked (``expired``), and the store's
        breaches: an expired memory still returned, a live one lost (``expiry_violation``)."""
        found: list[Found] = []
        now = self.world.clock.now()
        for memory_id, memory in list(self.live.items()):
            expired = now >= self.refreshed[memory_id] + self.expiry
            try:
                self.world.store.get(memory_id, actor=Actor(memory.author))
                present = True
            except NotFound:
                present = False
            except MemstoreError:
                continue
            if expired:
                if memory_id not in self._reported:
                    self._reported.add(memory_id)
                    found.append((EventKind.EXPIRED, memory_id, ""))
                if present:
                    found.append((EventKind.EXPIRY_VIOLATION, memory_id, "expired memory still returned by get()"))
                del self.live[memory_id]
            elif not present and self.world.access.level(memory.author, memory.repo) >= Access.READ:
                found.append((EventKind.EXPIRY_VIOLATION, memory_id, "live memory lost"))
                del self.live[memory_id]
        return found

    def follow(self, kind: str, memory_id: str, detail: str, actor: Actor) -> None:
        """Keep the account in step with one thing a session did to the store."""
        if kind in {EventKind.STORE, EventKind.CORRECT}:
            if kind == EventKind.CORRECT:
                self.live.pop(detail, None)
            try:
                made = self.world.store.get(memory_id, actor=actor)
            except MemstoreError:
                return
            self.live[made.id] = made
            self.refreshed[made.id] = made.refreshed_at
        elif kind == EventKind.RETIRE:
            self.live.pop(memory_id, None)
        elif kind == EventKind.REFRESH and memory_id in self.live:
            self.refreshed[memory_id] = self.world.clock.now()
