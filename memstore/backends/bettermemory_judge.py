"""bettermemory's staleness judgement as a `memstore.verify.Verifier` (``BettermemoryVerifier``), and
how a bettermemory memory cites code (the body's last line), shared with ``bettermemory:``.

bettermemory (PyPI ``bettermemory`` 8.0.0) judges a stored memory with three legs
(``bettermemory.verify``): the calendar (verified more than 30 days ago), path drift (a path the
memory cites or attested is gone) and commit drift (commits since the memory was verified that
touch what it cites, narrowed by its declared claims: ``path``, ``path::symbol``,
``path::NAME=literal``, and for a claimed file only the commits that touch a claimed binding
count). ``compute_staleness_verdict`` rolls them into ``fresh``, ``spot_check_recommended`` or
``spot_check_required``; a spot-check is ``memory_verify``, which re-checks the declared claims
against the tree (``claims.check_claim``) and refuses the stamp over a false one.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

from memstore.errors import ConfigurationError
from memstore.model import Citation, Memory
from memstore.verify import CitationCheck, Codebase, Contradiction, GitRepository, Verdict, VerdictStatus

__all__ = ["CITED", "BettermemoryVerifier", "bettermemory", "cited_body", "cited_in"]

CITED = "\n\n"  # before the body's last paragraph, where its citations are: `path:line`, `path:first-last`
_DEF = re.compile(r"(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)")  # at column 0: a top-level binding
_CHECKOUTS = 4  # checkouts of the code now kept at once
_LINES = 12  # lines of a cited range read for claims


def bettermemory() -> SimpleNamespace:
    """bettermemory's modules that the adapter and the verifier drive."""
    try:  # an optional dependency: pip install 'agent-memstore[bettermemory]'
        import bettermemory.claims
        import bettermemory.config
        import bettermemory.handlers.write
        import bettermemory.identity
        import bettermemory.models
        import bettermemory.origin
        import bettermemory.search
        import bettermemory.store
        import bettermemory.verify
    except ImportError as exc:
        raise ConfigurationError(
            "bettermemory: is bettermemory's store: pip install 'agent-memstore[bettermemory]'"
        ) from exc
    bm = bettermemory
    return SimpleNamespace(
        claims=bm.claims, config=bm.config, identity=bm.identity, models=bm.models, origin=bm.origin,
        search=bm.search, store=bm.store, verify=bm.verify, write=bm.handlers.write,
    )  # fmt: skip


def cited_body(fact: str, citations: Sequence[Citation]) -> str:
    """A bettermemory body: the fact, and its citations in a last paragraph of ``path:line``."""
    if not citations:
        return fact
    spans = (f"`{c.path}:{c.line}" + (f"-{c.end_line}`" if c.end_line else "`") for c in citations)
    return fact + CITED + ", ".join(spans)


def cited_in(body: str) -> tuple[str, list[tuple[str, int, int | None]]]:
    """The fact and the citations (path, line, last line) of a body `cited_body` wrote."""
    text = body.removesuffix("\n")  # bettermemory keeps a body stripped, with one newline
    fact, marker, tail = text.rpartition(CITED)
    if not marker or not (tail.startswith("`") and tail.endswith("`")):
        return text, []
    cited: list[tuple[str, int, int | None]] = []
    for span in tail[1:-1].split("`, `"):
        path, _, lines = span.rpartition(":")
        first, _, last = lines.partition("-")
        if not path or not first.isdigit() or not (last.isdigit() or not last):
            return text, []
        cited.append((path, int(first), int(last) if last else None))
    return fact, cited


def _claims_of(path: str, lines: Sequence[str]) -> list[str]:
    """The claims an author declares of cited lines: the path, and each top-level ``def`` or
    ``class`` (a symbol) or ``NAME = literal`` (a literal) among them."""
    found = [path]
    for line in lines[:_LINES]:
        if (match := _DEF.match(line)) is not None:
            found.append(f"{path}::{match.group(1)}")
            continue
        try:
            node = ast.parse(line).body[0] if line[:1].isidentifier() else None
        except (SyntaxError, ValueError, IndexError):
            continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
            found.append(f"{path}::{node.targets[0].id}={ast.unparse(node.value)}")
    return found


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], capture_output=True, text=True, check=True, timeout=300)
    return done.stdout.strip()


class _Trees:
    """Folders holding code for bettermemory to read: a checkout of the code now (git's, so its
    commit-drift leg can walk the history), one per repository and commit, the last few kept;
    and the cited files at a citation's commit, one by one."""

    def __init__(self) -> None:
        self._scratch = tempfile.TemporaryDirectory(prefix="memstore-bettermemory-")
        self._checkouts: OrderedDict[tuple[str, str], Path] = OrderedDict()
        self._dates: dict[tuple[str, str], datetime] = {}
        self._lock = threading.Lock()
        self._made = 0

    def _folder(self) -> Path:
        self._made += 1
        return Path(self._scratch.name, f"t{self._made}")

    def checkout(self, codebase: Codebase) -> Path | None:
        """A git checkout of ``codebase`` at its commit (None: it is not a git repository's)."""
        repo, commit = getattr(codebase, "repo", None), codebase.commit
        if not isinstance(repo, GitRepository) or commit is None:
            return None
        key = (str(repo.path), commit)
        with self._lock:
            if key in self._checkouts:
                self._checkouts.move_to_end(key)
                return self._checkouts[key]
            target = self._folder()
            try:
                _git("clone", "--quiet", "--shared", "--no-checkout", str(repo.path), str(target))
                _git("-C", str(target), "checkout", "--quiet", "--detach", commit)
            except (OSError, subprocess.SubprocessError):
                shutil.rmtree(target, ignore_errors=True)
                return None
            self._checkouts[key] = target
            while len(self._checkouts) > _CHECKOUTS:
                shutil.rmtree(self._checkouts.popitem(last=False)[1], ignore_errors=True)
            return target

    def dated(self, tree: Path, commit: str) -> datetime | None:
        """When ``commit`` was authored (None: unknown here)."""
        key = (str(tree), commit)
        if key not in self._dates:
            try:
                self._dates[key] = datetime.fromisoformat(_git("-C", str(tree), "log", "-1", "--format=%aI", commit))
            except (OSError, subprocess.SubprocessError, ValueError):
                return None
        return self._dates[key]

    @contextmanager
    def files(self, codebase: Codebase, paths: Sequence[str], commit: str | None = None) -> Iterator[Path]:
        """A scratch folder holding ``paths`` as ``codebase`` has them (at ``commit``, or now)."""
        with self._lock:
            folder = self._folder()
        try:
            for path in dict.fromkeys(paths):
                read = codebase.read(path) if commit is None else codebase.read_at(commit, path)
                if read.ok:
                    target = folder / path
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_text("".join(f"{line}\n" for line in read.lines), encoding="utf-8")
            folder.mkdir(parents=True, exist_ok=True)
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)


class BettermemoryVerifier:
    """bettermemory's staleness judgement, then its spot-check, as a `memstore.verify.Verifier`:
    measured on the same benchmarks as memstore's verifier (``evals/bench/eval_verdicts.py
    --verifier memstore.backends.bettermemory:BettermemoryVerifier``).

    The memory is what its author writes in bettermemory and stamps when writing it: the fact with
    its citations in the body, each cited path attested (``verified_paths``), verified at the
    citation's commit (``verified_head``, ``last_verified_at`` the commit's date), and the claims
    the author sees in the cited lines at that commit: each path as a ``path`` claim, each
    top-level ``def``/``class`` as ``path::symbol``, each ``NAME = literal`` as
    ``path::NAME=literal``, kept only where ``claims.check_claim`` holds them at that commit (as
    ``memory_write`` refuses a false claim). The verdict is bettermemory's own:
    ``verify.compute_staleness_verdict`` over ``compute_verification_status`` (now: the date of
    the code's commit), ``detect_path_drift`` and ``compute_commit_drift`` run in a git checkout of
    the code now (a code base with no git history gets no commit leg).

    As a verdict: ``fresh`` is VALID. ``spot_check_recommended`` and ``spot_check_required`` are
    what ``memory_verify`` then does, its claim gate (``claims.check_claim`` on the code now): a
    cited path gone (its path-drift leg, or a false ``path`` claim) is MISSING; another false claim
    is CONTRADICTED (out of use: bettermemory's refusal states the value the code has now and
    leaves the rewrite to the agent, so no correction); every claim holding, the stamp is allowed
    and the memory is VALID, marked uncertain (bettermemory checks claims, not the fact). It never
    re-anchors (its claims name files and bindings, not lines) and follows no rename.
    """

    def __init__(self) -> None:
        self._bm = bettermemory()
        self._trees = _Trees()

    def _declared(self, memory: Memory, codebase: Codebase) -> list[str]:
        """The claims the author declares, each holding at its citation's commit."""
        bm, declared = self._bm.claims, []
        for citation in memory.citations:
            commit = citation.commit or codebase.commit
            read = codebase.read_at(commit, citation.path) if commit else codebase.read(citation.path)
            if not read.ok:
                continue
            lines = read.lines[citation.line - 1 : citation.last_line]
            with self._trees.files(codebase, [citation.path], commit) as then:
                for raw in _claims_of(citation.path, lines):
                    try:
                        claim = bm.parse_claim(raw)
                    except ValueError:
                        continue
                    if bm.check_claim(claim, then) is None:
                        declared.append(claim.render())
        return list(dict.fromkeys(declared))[: bm.MAX_CLAIMS]

    def _staleness(
        self, memory: Memory, tree: Path, git: bool, claims: list[str], now: str | None
    ) -> tuple[str, list[str]]:
        """bettermemory's staleness verdict, and the cited paths its path-drift leg found gone."""
        verify, origin = self._bm.verify, self._bm.origin
        body = cited_body(memory.fact, memory.citations)
        paths = list(dict.fromkeys(c.path for c in memory.citations))
        head = next((c.commit for c in memory.citations if c.commit), None)
        verified = self._trees.dated(tree, head) if git and head else None
        current = self._trees.dated(tree, now) if git and now else None
        drift = None
        if git and head and verified is not None:
            repo = f"https://github.com/{memory.repo}"  # the memory's origin and the caller's: one repository
            caller = origin.Origin(cwd=str(tree), repo=repo, worktree_root=str(tree))
            status = verify.compute_commit_drift(
                verified, repo, caller_origin=caller, verified_paths=paths, body=body, claims=claims, verified_head=head
            )
            drift = None if status is None else status.commits_since_verify
        report = verify.detect_path_drift(body, verified_paths=paths, worktree_root=str(tree))
        stamp = verify.compute_verification_status(
            verified or memory.refreshed_at, now=current or datetime.now(UTC)
        )  # fmt: skip
        verdict: str = verify.compute_staleness_verdict(
            verification=stamp, path_drift_missing=len(report.claim_anchored_missing), commit_drift_count=drift
        )
        missing = set(report.claim_anchored_missing)
        return verdict, [path for path in paths if str(tree / path) in missing]

    @contextmanager
    def _now(self, memory: Memory, codebase: Codebase) -> Iterator[tuple[Path, bool]]:
        checkout = self._trees.checkout(codebase)
        if checkout is not None:
            yield checkout, True
            return
        with self._trees.files(codebase, [c.path for c in memory.citations]) as folder:
            yield folder, False

    def judge(self, memory: Memory, checks: Sequence[CitationCheck], codebase: Codebase) -> Verdict:
        claims = self._declared(memory, codebase)
        with self._now(memory, codebase) as (tree, git):
            verdict, gone = self._staleness(memory, tree, git, claims, codebase.commit)
            if verdict == "fresh":
                return Verdict(VerdictStatus.VALID, tuple(checks), reason="bettermemory: fresh", judge="bettermemory")
            bm = self._bm.claims
            failed = {path: f"path {path!r} is gone (path drift)" for path in gone}
            for claim in bm.load_claims(claims):
                reason = bm.check_claim(claim, tree)
                if reason is not None and not bm.claim_reason_is_indeterminate(reason):
                    failed.setdefault(claim.render(), reason)
        if not failed:
            return Verdict(
                VerdictStatus.VALID, tuple(checks), reason=f"bettermemory: {verdict}; every declared claim holds",
                uncertain="bettermemory checks claims, not the fact", judge="bettermemory",
            )  # fmt: skip
        lost = any("::" not in claim for claim in failed)  # a cited path gone, or its path claim false
        return Verdict(
            VerdictStatus.MISSING if lost else VerdictStatus.CONTRADICTED, tuple(checks),
            reason="bettermemory: " + "; ".join(dict.fromkeys(failed.values())),
            contradictions=tuple(Contradiction(claim, None, claim.split("::")[0]) for claim in failed),
            judge="bettermemory",
        )  # fmt: skip
