"""Relocation accuracy on real code histories, judged against git's own diff.

Run:  python evals/bench/eval_relocation.py                 (downloads sdists with pip; a few minutes)
      python evals/bench/eval_relocation.py --packages click --per-pair 200

A by-hand evaluation, not a test: it fetches source releases of well-known packages from
PyPI with ``pip download`` (cached under --cache), commits each release on top of the
previous one in a git repository (so each step is a real release-to-release change), cites
random non-blank lines at an older release with their commit, verifies them at a newer
release, and compares with the answer git's own line mapping gives (``git diff -M -U0``,
with the diff algorithm named by --algorithm):

  right:   same status (valid / moved / renamed / changed / file_missing) and same new line;
  wrong invalidation: we said changed or missing while the cited text still stands in the
           new version of the file (anywhere);
  lines git could not map but whose text stands elsewhere count as right when we say moved.
"""

from __future__ import annotations

import argparse
import itertools
import random
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from pathlib import Path

from memstore import Citation
from memstore.verify import CitationStatus, GitCodebase, verify_citation
from memstore.verify.codebase import split_lines
from memstore.verify.git import GitRepository, map_line
from memstore.verify.history import HistoryBuilder

RELEASES = {
    "click": ["8.0.0", "8.0.2", "8.0.4", "8.1.0", "8.1.2", "8.1.3", "8.1.5", "8.1.7"],
    "requests": ["2.25.1", "2.26.0", "2.27.1", "2.28.2", "2.29.0", "2.31.0", "2.32.3"],
    "attrs": ["21.4.0", "22.1.0", "22.2.0", "23.1.0", "23.2.0", "24.2.0"],
    "jinja2": ["3.0.0", "3.0.3", "3.1.0", "3.1.2", "3.1.4"],
}
# Histories with files deleted between releases (modules merged, folded, dropped), where a
# citation of a deleted file must come out missing, never re-anchored onto another file:
# python evals/bench/eval_relocation.py --packages deleted
DELETED = {
    "flask": ["2.0.3", "2.2.5", "3.0.3"],
    "httpx": ["0.18.2", "0.23.3", "0.27.2"],
    "pluggy": ["0.13.1", "1.0.0", "1.3.0", "1.5.0"],
    "starlette": ["0.14.2", "0.20.4", "0.37.2"],
    "cachetools": ["4.2.4", "5.0.0", "5.5.0"],
}


def fetch(package: str, version: str, cache: Path) -> Path:
    cache.mkdir(parents=True, exist_ok=True)
    found = [p for p in cache.iterdir() if p.name.lower().startswith(f"{package}-{version}.tar".lower())]
    if not found:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--no-binary",
                ":all:",
                f"{package}=={version}",
                "-d",
                str(cache),
            ],
            check=True,
            capture_output=True,
        )
        found = [p for p in cache.iterdir() if p.name.lower().startswith(f"{package}-{version}.tar".lower())]
    return found[0]


def python_files(sdist: Path) -> dict[str, bytes]:
    files = {}
    with tarfile.open(sdist) as tar:
        for member in tar.getmembers():
            parts = member.name.split("/", 1)
            if member.isfile() and len(parts) == 2 and parts[1].endswith(".py") and "/tests/" not in f"/{parts[1]}":
                data = tar.extractfile(member)
                if data is not None:
                    files[parts[1].removeprefix("src/")] = data.read()
    return files


def evaluate(
    package: str,
    versions: list[str],
    cache: Path,
    per_pair: int,
    algorithm: str,
    rng: random.Random,
    tally: Counter[str],
    mistakes: list[str],
    mode: str,
) -> None:
    b = HistoryBuilder()
    previous: set[str] = set()
    labels = []
    for version in versions:
        files = python_files(fetch(package, version, cache))
        for path in previous - set(files):
            b.remove(path)
        for path, data in files.items():
            b.write(path, data)
        previous = set(files)
        labels.append(b.commit(f"{package} {version}", label=version))
    with tempfile.TemporaryDirectory() as tmp:
        built = b.build(Path(tmp) / package, bare=True)
        pairs = [*list(itertools.pairwise(labels)), (labels[0], labels[-1])]
        for old_label, new_label in pairs:
            old, new = built.commits[old_label], built.commits[new_label]
            codebase = GitCodebase(built.path, new)
            git_map = GitRepository(built.path).diff_hunks(old, new, algorithm)
            old_files = b.files(old_label)
            new_files = b.files(new_label)
            candidates = [
                (p, n)
                for p, data in sorted(old_files.items())
                for n, text in enumerate(split_lines(data), 1)
                if text.strip()
            ]
            for path, line in rng.sample(candidates, min(per_pair, len(candidates))):
                text = split_lines(old_files[path])[line - 1]
                cited = Citation(path, line, commit=old) if mode == "commit" else Citation(path, line, snippet=text)
                check = verify_citation(codebase, cited)
                if path in new_files and path not in git_map:
                    truth_path, truth_line = path, line  # file unchanged
                elif path in git_map and git_map[path][0]:
                    truth_path = git_map[path][0]
                    truth_line = map_line(git_map[path][1], line)
                else:
                    truth_path, truth_line = path, None
                new_text = new_files.get(truth_path)
                stands = new_text is not None and " ".join(text.split()) in {
                    " ".join(x.split()) for x in split_lines(new_text)
                }
                tally["citations"] += 1
                if truth_line is not None:
                    renamed = truth_path != path
                    want = (
                        CitationStatus.RENAMED
                        if renamed
                        else (CitationStatus.VALID if truth_line == line else CitationStatus.MOVED)
                    )
                    right = check.status is want and check.line == truth_line and check.path == truth_path
                    tally["git maps the line"] += 1
                elif stands:
                    right = check.status in {CitationStatus.MOVED, CitationStatus.RENAMED, CitationStatus.VALID}
                    tally["git changed it, text stands elsewhere"] += 1
                elif new_text is None and truth_path == path and path not in new_files:
                    right = check.status is CitationStatus.FILE_MISSING
                    tally["file deleted"] += 1
                    tally["file deleted, said missing"] += right
                else:
                    right = check.status is CitationStatus.CHANGED
                    tally["git changed it, text gone"] += 1
                touched = old_files[path] != new_files.get(truth_path)
                tally["in changed files"] += touched
                tally["right in changed files"] += touched and right
                if right:
                    tally["right"] += 1
                elif len(mistakes) < 40:
                    got = f"got {check.status.value} {check.where}, git says {truth_path}:{truth_line}"
                    mistakes.append(f"{package} {old_label}->{new_label} {path}:{line} {text.strip()[:50]!r}: {got}")
                if stands and not check.status.usable:
                    tally["wrong invalidation"] += 1
                if stands:
                    tally["text stands"] += 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--packages", default=",".join(RELEASES), help="names, or 'deleted' (default: %(default)s)")
    parser.add_argument("--per-pair", type=int, default=150, help="citations per release pair (default: %(default)s)")
    parser.add_argument("--algorithm", default="myers", choices=["myers", "minimal", "patience", "histogram"])
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "memstore-eval" / "sdists")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument(
        "--mode",
        choices=["commit", "snippet"],
        default="commit",
        help="cite with the commit (history mapping) or with the snippet only (default: %(default)s)",
    )
    parser.add_argument("--show-mistakes", type=int, default=10)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    tally: Counter[str] = Counter()
    mistakes: list[str] = []
    every = {**RELEASES, **DELETED}
    chosen = DELETED if args.packages == "deleted" else {p: every[p] for p in args.packages.split(",")}
    for package, versions in chosen.items():
        evaluate(package, versions, args.cache, args.per_pair, args.algorithm, rng, tally, mistakes, args.mode)
    n = tally["citations"]
    print(
        f"{n:,} citations ({args.mode} known) from {args.packages} release histories, "
        f"judged against git diff --{args.algorithm}"
    )
    for key in (
        "git maps the line",
        "git changed it, text stands elsewhere",
        "git changed it, text gone",
        "file deleted",
    ):
        print(f"  {key:<40} {tally[key]:>6,}")
    print(f"  right answer (status and line):          {tally['right'] / n:>7.1%}   (target >= 98%)")
    deleted = tally["file deleted"]
    print(f"  citations of deleted files said missing: {tally['file deleted, said missing']:>6,} of {deleted:,}")
    changed = tally["in changed files"]
    print(
        f"  ... of the {changed:,} in files that changed:    {tally['right in changed files'] / max(changed, 1):>7.1%}"
    )
    stands = tally["text stands"]
    print(
        f"  wrong invalidation, of {stands:,} whose text stands: {tally['wrong invalidation'] / max(stands, 1):.2%}"
        "   (target <= 1%)"
    )
    for line in mistakes[: args.show_mistakes]:
        print("   ", line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
