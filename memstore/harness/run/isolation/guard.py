"""Noticing a store changed behind the harness's back.

While an out-of-process agent runs, nothing of the harness writes to the trial's store: every
memory operation the agent asks for is applied afterwards, through the store's API. So if a
store's files change while the agent runs, the agent (or something it started) wrote them
directly. The guard fingerprints the files of a file-backed store (size, modification time,
inode) before the agent starts and compares after it stops; a difference is recorded as a
``tampered`` event, which the metrics count and a gate fails on. Stores that are not files
(``memory://``, third-party services) have nothing to fingerprint here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from memstore.harness.records import EventKind
from memstore.verify import walk

__all__ = ["Recorder", "StoreGuard"]

Fingerprint = tuple[tuple[str, int, int, int], ...]
_SKIP = ("-shm",)  # SQLite's shared-memory index changes on reads: not evidence of a write


class Recorder(Protocol):
    def record(self, kind: EventKind, memory_id: str = "", detail: str = "") -> None: ...


class StoreGuard:
    """Fingerprints the files (or folders of files) that hold a store.

    Args:
        paths: the store's files or folders; empty for a store that is not on disk.
    """

    def __init__(self, paths: Sequence[Path] = ()) -> None:
        self.paths = tuple(paths)

    def _files(self) -> list[Path]:
        found: list[Path] = []
        for path in self.paths:
            if path.is_dir():
                found += sorted(Path(d, name) for d, _, names in walk(path) for name in names)
            else:
                found += [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-journal")]
        return [p for p in found if not p.name.endswith(_SKIP)]

    def mark(self) -> Fingerprint:
        """The store's files as they are now."""
        marks = []
        for path in self._files():
            try:
                info = path.stat()
            except OSError:
                continue
            marks.append((str(path), info.st_size, info.st_mtime_ns, info.st_ino))
        return tuple(marks)

    def check(self, mark: Fingerprint, session: Recorder) -> bool:
        """Whether the files are as marked; if not, record a ``tampered`` event saying which changed."""
        now = self.mark()
        if now == mark:
            return True
        before, after = {m[0]: m for m in mark}, {m[0]: m for m in now}
        changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
        names = ", ".join(Path(p).name for p in changed[:5])
        session.record(EventKind.TAMPERED, "", f"the store's files changed while the agent ran ({names})")
        return False
