"""memstore: a reference memory store for coding agents, and a harness that measures any store.

The public surface is re-exported here; see docs/design.md and docs/store.md for the contract.
"""

from memstore.access import Access, AccessPolicy, Actor
from memstore.clock import Clock, FakeClock, SystemClock
from memstore.errors import (
    ConfigurationError,
    Conflict,
    IncompatibleStore,
    MemstoreError,
    NotFound,
    PermissionDenied,
    StorageError,
    ValidationError,
)
from memstore.ids import IdFactory, UlidIds
from memstore.model import Citation, Kind, Memory, MemoryDraft, Status, Surface
from memstore.store import DEFAULT_EXPIRY, MemoryStore, open_store

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_EXPIRY",
    "Access",
    "AccessPolicy",
    "Actor",
    "Citation",
    "Clock",
    "ConfigurationError",
    "Conflict",
    "FakeClock",
    "IdFactory",
    "IncompatibleStore",
    "Kind",
    "Memory",
    "MemoryDraft",
    "MemoryStore",
    "MemstoreError",
    "NotFound",
    "PermissionDenied",
    "Status",
    "StorageError",
    "Surface",
    "SystemClock",
    "UlidIds",
    "ValidationError",
    "__version__",
    "open_store",
]
