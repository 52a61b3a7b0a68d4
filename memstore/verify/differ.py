"""Diffs between commits from one long-lived ``git diff-tree --stdin`` per repository and options.

A coding session's change is diffed once or twice (its patch, the paths it touched); a trial
makes several. Rather than a ``git diff`` process each, `Differ` keeps one ``diff-tree --stdin``
running and asks it one pair at a time: it answers a line ``NEW OLD`` with the diff from ``OLD``
to ``NEW`` (opened by ``NEW``'s id, ``--always`` even when empty), and echoes back a line that
names no commit, which marks where each answer ends. The marker starts with none of a patch's
own line openings and holds a random token, so neither a patch nor a list of paths (a file an
agent named, say) can contain it. ``-r``: files in folders are named one by one, as ``git diff``
names them (``diff-tree`` alone names the top folder). The patch is the one ``git
diff OLD NEW`` prints with the same options (both are git's diff of two trees).
"""

from __future__ import annotations

import contextlib
import secrets
import subprocess
from pathlib import Path

from memstore.errors import RepositoryError
from memstore.verify.gitrun import start_piped, stop_piped

__all__ = ["Differ"]


class Differ:
    """``git diff-tree --stdin OPTIONS`` kept running in ``path`` (restarted if it ended)."""

    def __init__(self, path: Path, options: tuple[str, ...]) -> None:
        self.path = path
        self.options = options
        self._proc: subprocess.Popen[bytes] | None = None
        self._marker = f"=memstore-end-{secrets.token_hex(8)}=\n".encode()

    def diff(self, old: str, new: str, *, cap: int | None = None) -> bytes:
        """What ``git diff OPTIONS OLD NEW`` prints, for two commit ids of the repository.

        Raises:
            RepositoryError: when git cannot start, or ends (an id that is not a commit), or the
                diff is longer than ``cap`` bytes (git is stopped: no more of it is read)."""
        proc = self._running()
        assert proc.stdin is not None
        assert proc.stdout is not None
        try:
            proc.stdin.write(f"{new} {old}\n".encode() + self._marker)
            proc.stdin.flush()
            header = proc.stdout.readline()
            if header != f"{new}\n".encode():
                raise OSError(f"no diff from {old} to {new}")
            lines, size = [], 0
            while (line := proc.stdout.readline(self._limit(cap, size))) != self._marker:
                if not line:
                    raise OSError("git diff-tree ended early")
                lines.append(line)
                size += len(line)
                if cap is not None and size > cap:
                    raise OSError(f"the diff from {old} to {new} is longer than the {cap:,} bytes read")
        except OSError as exc:
            self.close()
            raise RepositoryError(f"git diff-tree in {self.path}: {exc}") from exc
        return b"".join(lines)

    def _limit(self, cap: int | None, size: int) -> int:
        """The most of the next line to read: one byte past ``cap``, or the whole marker."""
        return -1 if cap is None else cap + 1 - size + len(self._marker)

    def _running(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = start_piped(self.path, "diff-tree", "--stdin", "--always", "-r", *self.options)
        return self._proc

    def close(self) -> None:
        """Stop the process (it restarts on the next diff)."""
        proc, self._proc = self._proc, None
        stop_piped(proc)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # never raise from a finaliser
            self.close()
