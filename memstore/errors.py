"""The one exception hierarchy of memstore.

```
MemstoreError
 ├── ValidationError        bad input; the message names the field (also a ValueError)
 ├── PermissionDenied       the actor may see the memory or repository, but not do this
 ├── NotFound               no such memory, or one the actor may not see (also a LookupError)
 ├── Conflict               the memory is no longer active (superseded, retired) or was changed meanwhile
 ├── ConfigurationError     a store URI or option that cannot be used
 ├── RepositoryError        a git repository or ref that cannot be read (or git itself failed)
 ├── StorageError           the backing store failed
 │    └── IncompatibleStore a file that is not a memstore store, or one from a newer schema
 ├── ScenarioError          scenario files that cannot be used; ``problems`` locates each (FILE:LINE:COLUMN)
 ├── BuildError             a scenario that cannot be built into a world; ``path`` is the field to blame
 └── OutputError            what a run made could not be written (a full disk): the machine failed, not the user

Interrupted (a KeyboardInterrupt)  a run asked to stop by SIGTERM or Ctrl-C; its workers are gone
```

Expected outcomes (a verdict, a failed citation) are values, not exceptions: these are
for misuse and broken environments. Errors of outside systems (sqlite3, git) are
translated into these at the boundary of the module that owns that system.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "BuildError",
    "ConfigurationError",
    "Conflict",
    "IncompatibleStore",
    "Interrupted",
    "MemstoreError",
    "NotFound",
    "OutputError",
    "PermissionDenied",
    "RepositoryError",
    "RunFolderError",
    "ScenarioError",
    "StorageError",
    "ValidationError",
]


class MemstoreError(Exception):
    """Base class of every error memstore raises on purpose."""


class ValidationError(MemstoreError, ValueError):
    """Input that breaks a rule of the model.

    Attributes:
        field: the name of the offending field (``"subject"``, ``"citations[2]"``, ...).
    """

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"{field}: {message}")


class PermissionDenied(MemstoreError):
    """The actor is not allowed to perform this action."""


class NotFound(MemstoreError, LookupError):
    """No memory with this id is visible to the actor.

    Raised alike for a memory that does not exist, one that expired and one the actor
    may not see, so that the error never reveals what the actor may not know.
    """

    def __init__(self, memory_id: str) -> None:
        self.memory_id = memory_id
        super().__init__(f"memory {memory_id!r} not found")


class Conflict(MemstoreError):
    """The memory is not in a state that allows the action (for example it was superseded)."""


class ConfigurationError(MemstoreError):
    """A store URI, option or plug-in that cannot be used as given."""


class RunFolderError(ConfigurationError):
    """A run folder that cannot be used as asked: not one, another engine's or another run's, or
    holding what is not a run folder's."""


class RepositoryError(MemstoreError):
    """A repository, ref or commit that cannot be read, or a git command that failed."""


class StorageError(MemstoreError):
    """The backing store failed (disk, database, lock)."""


class IncompatibleStore(StorageError):
    """The target exists but is not a store this version of memstore can open."""


class ScenarioError(MemstoreError):
    """Scenario files that cannot be used.

    Attributes:
        problems: every reason, each locating itself (``FILE:LINE:COLUMN: at FIELD: MESSAGE``).
    """

    def __init__(self, problems: Sequence[object]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class BuildError(MemstoreError):
    """A scenario that cannot be built into a world.

    Attributes:
        path: the scenario field to blame, as a tuple of keys and indexes.
    """

    def __init__(self, path: tuple[str | int, ...], message: str) -> None:
        self.path = path
        super().__init__(message)


class OutputError(MemstoreError):
    """What a run made could not be written (a full disk, a file grown past its limit).

    Not a misuse: the command line exits 4 for it, not 2. Every file of the run folder is whole,
    the one before or the new one.
    """


class Interrupted(KeyboardInterrupt):
    """A run asked to stop (SIGTERM, or Ctrl-C); its workers and scratch space are gone."""
