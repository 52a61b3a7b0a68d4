"""The reference store's checks of its arguments, and the order of a chain's versions
(`memstore.backends.base.RecordStore` and the backends use them; re-exported there)."""

from __future__ import annotations

from memstore.access import Actor
from memstore.errors import Conflict, NotFound, ValidationError
from memstore.model import Memory, MemoryDraft, Status, Surface
from memstore.store import MAX_RECENT_LIMIT
from memstore.validation import shown

__all__ = [
    "MAX_ID_CHARS",
    "chain_order",
    "check_actor",
    "check_correction",
    "check_limit",
    "check_memory_id",
    "check_store_arguments",
    "check_surface",
]

MAX_ID_CHARS = 200


def check_actor(actor: object) -> Actor:
    """``actor`` if it is an `Actor`, else `ValidationError`."""
    if not isinstance(actor, Actor):
        raise ValidationError("actor", f"must be an Actor, got {actor!r}")
    return actor


def check_surface(surface: object) -> Surface:
    """``surface`` as a `Surface`, else `ValidationError`."""
    try:
        return Surface(str(surface))
    except ValueError as exc:
        raise ValidationError("surface", f"must be a Surface, got {surface!r}") from exc


def check_memory_id(memory_id: object) -> str:
    if not isinstance(memory_id, str) or not memory_id:
        raise ValidationError("memory_id", f"must be a non-empty string, got {shown(memory_id)}")
    if len(memory_id) > MAX_ID_CHARS or not memory_id.isprintable() or not memory_id.isascii():
        raise NotFound(memory_id[:MAX_ID_CHARS])  # no id of ours looks like this: it names nothing
    return memory_id


def chain_order(versions: list[Memory]) -> list[Memory]:
    """The versions of one chain, oldest first, by what corrects what (a correction's clock may
    disagree with the one that wrote the version before it, so timestamps alone cannot order
    them); versions a broken link leaves over follow, by time."""
    by_parent = {m.supersedes: m for m in versions if m.supersedes is not None}
    ids = {m.id for m in versions}
    roots = sorted(
        (m for m in versions if m.supersedes is None or m.supersedes not in ids), key=lambda m: (m.created_at, m.id)
    )
    ordered: list[Memory] = []
    for root in roots:
        current: Memory | None = root
        while current is not None and current not in ordered:
            ordered.append(current)
            current = by_parent.get(current.id)
    rest = sorted((m for m in versions if m not in ordered), key=lambda m: (m.created_at, m.id))
    return ordered + rest


def check_store_arguments(draft: object, actor: object, surface: object) -> tuple[MemoryDraft, Actor, Surface]:
    """``store()``'s arguments checked: a valid draft (`MemoryDraft.validated`), an `Actor`, a `Surface`."""
    if not isinstance(draft, MemoryDraft):
        raise ValidationError("draft", f"must be a MemoryDraft, got {type(draft).__name__}")
    actor, surface = check_actor(actor), check_surface(surface)
    return draft.validated(), actor, surface


def check_correction(old: Memory, memory: Memory) -> None:
    """A correction stays in the repository and kind of the memory it corrects, an active one
    (`ValidationError`, `Conflict`)."""
    if old.repo != memory.repo:
        raise ValidationError("repo", f"a correction stays in the repository of the memory it corrects ({old.repo})")
    if old.kind is not memory.kind:
        raise ValidationError("kind", f"a correction keeps the kind of the memory it corrects ({old.kind.value})")
    if old.status is not Status.ACTIVE:
        raise Conflict(f"cannot correct memory {old.id!r}: it is {old.status.value}")


def check_limit(limit: object) -> int:
    """``limit`` if it is an integer from 1 to `MAX_RECENT_LIMIT`, else `ValidationError`."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_RECENT_LIMIT:
        raise ValidationError("limit", f"must be an integer from 1 to {MAX_RECENT_LIMIT}, got {shown(limit)}")
    return limit
