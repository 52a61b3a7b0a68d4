"""The one exception hierarchy of memstore: every exception class of the package.

```
MemstoreError
 ├── ValidationError        bad input; the message names the field (also a ValueError)
 ├── PermissionDenied       the actor may see the memory or repository, but not do this
 ├── NotFound               no such memory, or one the actor may not see (also a LookupError)
 ├── Conflict               the memory is no longer active (superseded, retired) or was changed meanwhile
 ├── ConfigurationError     a store URI, option or plug-in that cannot be used
 │    └── RunFolderError    a run folder that cannot be used as asked (not one, another run's, damaged)
 │         └── BadShard     a unit's shard that is not this engine's for the unit its name says
 ├── RepositoryError        a git repository or ref that cannot be read (or git itself failed)
 │    └── Escape            a path that leaves its working copy, enters .git or loops (also an OSError)
 ├── StorageError           the backing store failed
 │    └── IncompatibleStore a file that is not a memstore store, or one from a newer schema
 ├── ImportProblems         lines of an import file that cannot be stored; ``problems`` lists each
 ├── ScenarioError          scenario files that cannot be used; ``problems`` locates each (FILE:LINE:COLUMN)
 ├── BuildError             a scenario that cannot be built into a world; ``path`` is the field to blame
 ├── OutputError            what a run made could not be written (a full disk): the machine failed, not the user
 ├── CostCapReached         the agents' reported cost reached --max-cost; the runner starts no more units
 └── GateFailed             a gate of the pytest plugin did not pass (pytest fails a test item so)

Interrupted (KeyboardInterrupt)  a run asked to stop by SIGTERM or Ctrl-C; its workers are gone
CommandError (click.ClickException)  the command line's one-line error, exit status 2 (memstore.commands)
```

Expected outcomes (a verdict, a failed citation) are values, not exceptions: these are
for misuse and broken environments. Errors of outside systems (sqlite3, git) are
translated into these at the boundary of the module that owns that system. `CommandError`
lives with the command line, since it must be click's; the boundary there turns every
`MemstoreError` into one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

__all__ = [
    "BadShard",
    "BuildError",
    "ConfigurationError",
    "Conflict",
    "CostCapReached",
    "Escape",
    "GateFailed",
    "ImportProblems",
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


class BadShard(RunFolderError):
    """A shard that is not one this engine wrote for the unit its name says (one line why)."""


class RepositoryError(MemstoreError):
    """A repository, ref or commit that cannot be read, or a git command that failed."""


class Escape(RepositoryError, OSError):
    """A path that leaves the root of its working copy, enters ``.git``, or loops.

    Also an `OSError` (made with an errno), since opening any file can fail: a reader that
    handles what cannot be opened handles this too."""


class StorageError(MemstoreError):
    """The backing store failed (disk, database, lock)."""


class IncompatibleStore(StorageError):
    """The target exists but is not a store this version of memstore can open."""


class _AtLine(Protocol):
    @property
    def line(self) -> int: ...

    @property
    def message(self) -> str: ...


class ImportProblems(MemstoreError):
    """Lines of an import file that cannot be stored, every one found (`memstore.transfer`).

    Nothing was stored, but ``stored``: the ids of memories stored before a refused line that
    the store would not let be taken back (deleting needs more than storing).
    """

    def __init__(self, problems: Sequence[_AtLine], stored: tuple[str, ...] = ()) -> None:
        self.problems = list(problems)
        self.stored = stored
        shown = [f"line {p.line}: {p.message}" for p in self.problems[:20]]
        more = f"\n... and {len(self.problems) - 20} more" if len(self.problems) > 20 else ""
        super().__init__("\n".join(shown) + more)


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


class CostCapReached(MemstoreError):
    """The agents' reported cost reached ``--max-cost``: no more units start (the runner catches
    it and records the units it did not run as failures)."""

    def __init__(self, spent: float) -> None:
        super().__init__(f"${spent:.2f} spent")
        self.spent = spent


class GateFailed(MemstoreError):
    """A gate of the run failed, in the pytest plugin: its message, and where the run folder is.

    A gate's outcome is a value; this is how pytest is told a test item failed."""


class Interrupted(KeyboardInterrupt):
    """A run asked to stop (SIGTERM, or Ctrl-C); its workers and scratch space are gone."""
