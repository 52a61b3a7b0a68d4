"""A commit's files read off its tree objects, as ``git ls-tree -r -l --full-tree`` lists them.

The listing is made through a repository's long-lived object reader (``git cat-file
--batch-command``: ``contents`` for trees, ``info`` for a blob's size), so a commit's files cost
no process of their own. Tree objects and blob sizes are kept for the process by object id: an
object's id is a digest of its content, so what one repository read holds in every other, and a
new commit reads only the trees its change made.

The order is ``ls-tree -r``'s: depth first, in each tree's own order (git sorts a folder as if
its name ended in ``/``), a folder's files where the folder stands.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["Objects", "TreeEntry", "list_tree", "parse_ls_tree", "parse_tree"]

_TREE_MODE = "40000"
_SUBMODULE_MODE = "160000"
_KEPT = 200_000  # tree objects (and, apart, blob sizes) kept for the process before they are dropped
_TREES: dict[str, tuple[tuple[str, str, str], ...]] = {}  # tree id -> (mode, name, id) entries
_SIZES: dict[str, int] = {}  # blob id -> size


@dataclass(frozen=True)
class TreeEntry:
    """One file of a commit's tree: mode (``100644``, ``120000`` symlink, ``160000`` submodule), blob id, size."""

    mode: str
    oid: str
    size: int | None

    @property
    def is_symlink(self) -> bool:
        return self.mode == "120000"

    @property
    def is_file(self) -> bool:
        return self.mode in {"100644", "100755"}


# The reader's round trip: commands (``contents NAME``, ``info NAME``) -> for each, in order,
# (id, kind, size, content; None for ``info``) or None where git found no such object.
Objects = Callable[[Sequence[str]], list[tuple[str, str, int, bytes | None] | None]]


def parse_tree(data: bytes, width: int = 20) -> tuple[tuple[str, str, str], ...]:
    """The entries of a tree object (``MODE NAME\\0`` and the ``width``-byte id, one after
    another): (mode, name, id in hex), names decoded as ``ls-tree -z`` prints them (undecodable
    bytes kept)."""
    entries = []
    at = 0
    while at < len(data):
        space = data.index(b" ", at)
        nul = data.index(b"\x00", space)
        mode = _canonical(int(data[at:space], 8))
        name = data[space + 1 : nul].decode("utf-8", "surrogateescape")
        entries.append((mode, name, data[nul + 1 : nul + 1 + width].hex()))
        at = nul + 1 + width
    return tuple(entries)


def _canonical(mode: int) -> str:
    """A tree entry's mode as git reads it (``canon_mode``): a folder, a link, a submodule, or a
    file that is executable or not, whatever bits an old tool wrote."""
    kind = mode & 0o170000
    if kind == 0o040000:
        return _TREE_MODE
    if kind in (0o120000, 0o160000):
        return f"{kind:o}"
    return "100755" if mode & 0o100 else "100644"


def list_tree(objects: Objects, commit: str) -> dict[str, TreeEntry] | None:
    """Every file of ``commit`` by path, with its mode, id and size (None for a submodule), or
    None when ``commit`` names no tree-ish object the reader can list.

    Raises:
        LookupError: when a tree below names a tree git cannot find (a broken repository)."""
    for kept in (_TREES, _SIZES):
        if len(kept) >= _KEPT:
            kept.clear()  # a long run drops what it read long ago
    root = objects([f"contents {commit}^{{tree}}"])[0]
    if root is None or root[1] != "tree" or root[3] is None:
        return None
    width = len(root[0]) // 2  # 20 bytes (SHA-1) or 32 (SHA-256), as the repository hashes
    _TREES[root[0]] = parse_tree(root[3], width)
    _read_trees(objects, root[0], width)
    files: list[tuple[str, str, str]] = []
    _walk(root[0], "", files)
    unsized = list(dict.fromkeys(oid for mode, _, oid in files if mode != _SUBMODULE_MODE and oid not in _SIZES))
    if unsized:
        for oid, found in zip(unsized, objects([f"info {oid}" for oid in unsized]), strict=True):
            if found is None or found[1] != "blob":
                raise LookupError(f"blob {oid} is missing")
            _SIZES[oid] = found[2]
    return {path: TreeEntry(mode, oid, None if mode == _SUBMODULE_MODE else _SIZES[oid]) for mode, path, oid in files}


def parse_ls_tree(raw: bytes) -> dict[str, TreeEntry]:
    """The files ``git ls-tree -r -l -z --full-tree`` printed, by path."""
    found = {}
    for record in raw.split(b"\x00"):
        if record:
            meta, _, name = record.partition(b"\t")
            mode, _kind, oid, size = meta.split()
            found[name.decode("utf-8", "surrogateescape")] = TreeEntry(
                mode.decode(), oid.decode(), None if size == b"-" else int(size)
            )
    return found


def _read_trees(objects: Objects, root: str, width: int) -> None:
    """Read, level by level in one round trip each, the trees below ``root`` not yet kept."""
    level = [root]
    while level:
        wanted = list(
            dict.fromkeys(
                oid for tree in level for mode, _, oid in _TREES[tree] if mode == _TREE_MODE and oid not in _TREES
            )
        )
        for oid, found in zip(wanted, objects([f"contents {oid}" for oid in wanted]), strict=True):
            if found is None or found[1] != "tree" or found[3] is None:
                raise LookupError(f"tree {oid} is missing")
            _TREES[oid] = parse_tree(found[3], width)
        level = list(dict.fromkeys(oid for tree in level for mode, _, oid in _TREES[tree] if mode == _TREE_MODE))


def _walk(tree: str, prefix: str, files: list[tuple[str, str, str]]) -> None:
    """Append the files below ``tree`` in ``ls-tree -r``'s order, depth first without recursion
    (an agent's commit may nest folders deeper than Python's stack)."""
    stack = [(tree, prefix, 0)]
    while stack:
        current, folder, at = stack.pop()
        entries = _TREES[current]
        while at < len(entries):
            mode, name, oid = entries[at]
            at += 1
            if mode == _TREE_MODE:
                stack.append((current, folder, at))
                current, folder, at, entries = oid, f"{folder}{name}/", 0, _TREES[oid]
            else:
                files.append((mode, f"{folder}{name}", oid))
