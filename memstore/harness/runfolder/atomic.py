"""A run folder's files are written whole: to a temporary name beside the file, then renamed
over it. A write that fails half-way (a full disk, a file grown past its limit) leaves the file
as it was, never cut short, and no temporary file behind."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["whole"]


@contextmanager
def whole(target: Path) -> Iterator[Path]:
    """Where to write ``target``: renamed over it once the block is done.

    Raises:
        OSError: the write failed; its filename is ``target``, not the temporary name.
    """
    partial = target.with_name(f".{target.name}.part")
    try:
        yield partial
        partial.replace(target)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror or str(exc), str(target)) from exc
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
