"""Where two commits' histories meet: their merge base, walked through the object reader.

``git diff A...B`` diffs ``B`` against the merge base of ``A`` and ``B`` (their best common
ancestor). A pull request's diff and file list are that diff; asking the long-lived diff
process (`memstore.verify.differ`) for it, given the merge base, costs no process, where
``git diff A...B`` costs one each time. The walk reads commits' parents through the
repository's object reader, kept for the process by commit id (a commit's parents are part of
its id). Written by hand: git's own ``merge-base`` is a process, which is what this saves.
"""

from __future__ import annotations

from collections.abc import Iterable

from memstore.verify.git import GitRepository

__all__ = ["merge_base"]

_PARENTS: dict[str, tuple[str, ...]] = {}  # a commit's parents, by its id: the same in every repository
_PARENTS_KEPT = 200_000


def _parents(repo: GitRepository, commit: str) -> tuple[str, ...] | None:
    found = _PARENTS.get(commit)
    if found is None:
        found = repo.parents(commit)
        if found is not None:
            if len(_PARENTS) >= _PARENTS_KEPT:
                _PARENTS.clear()
            _PARENTS[commit] = found
    return found


def _ancestors(repo: GitRepository, starts: Iterable[str]) -> set[str] | None:
    """Every commit reachable from ``starts`` (themselves included); None if one cannot be read."""
    seen: set[str] = set()
    todo = list(starts)
    while todo:
        commit = todo.pop()
        if commit in seen:
            continue
        seen.add(commit)
        parents = _parents(repo, commit)
        if parents is None:
            return None
        todo.extend(parents)
    return seen


def merge_base(repo: GitRepository, a: str, b: str) -> str | None:
    """The one best common ancestor of commits ``a`` and ``b`` (full ids of ``repo``), as ``git
    merge-base`` names it; None when they have none, or more than one (git chooses among them:
    ask git), or a commit cannot be read.

    Walking back from ``b``, the first commits met that are ancestors of ``a`` are common
    ancestors, and every common ancestor lies behind one of them; the best are those of them
    not behind another."""
    if repo.parents(a) is None or repo.parents(b) is None:  # both commits of this repository
        return None
    behind_a = _ancestors(repo, [a])
    if behind_a is None:
        return None
    met: set[str] = set()
    seen: set[str] = set()
    todo = [b]
    while todo:
        commit = todo.pop()
        if commit in seen:
            continue
        seen.add(commit)
        if commit in behind_a:
            met.add(commit)
            continue
        parents = _parents(repo, commit)
        if parents is None:
            return None
        todo.extend(parents)
    if len(met) > 1:
        behind = _ancestors(repo, [p for commit in met for p in _parents(repo, commit) or ()])
        met -= behind or set()
    return next(iter(met)) if len(met) == 1 else None
