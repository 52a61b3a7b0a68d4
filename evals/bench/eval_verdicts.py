"""Verdict accuracy on real release histories, labelled by a method independent of the verifier.

Run:  python evals/bench/eval_verdicts.py                       (downloads sdists with pip; a few minutes)
      python evals/bench/eval_verdicts.py --packages attrs --per-pair 60
      python evals/bench/eval_verdicts.py --verifier mypkg.judge:make   (score any Verifier)

A by-hand evaluation, not a test. It fetches source releases of well-known Python packages from
PyPI (``pip download``, cached under --cache), commits each release on top of the previous one
in a git repository with the paths as released (``src/`` moves included), and for each release
pair mines memories at the older release the way a coding agent writes them (constants,
versions, defaults, where classes and functions are defined, and adversarial variants citing
unrelated lines: `memstore.harness.scenarios.mining`). Their truth at the newer release comes
from the syntax trees of both releases, not from the verifier. Each memory is verified at the
newer release and scored:

  accuracy             the verdict is the class the label calls for (valid -> VALID,
                       moved -> REANCHORED, contradicted -> CONTRADICTED, missing -> MISSING,
                       unsupported -> UNSUPPORTED);
  false invalidation   a still-true memory (valid, moved) judged unusable;
  missed bad           a bad memory (contradicted, missing, unsupported) judged usable;
  corrected value      a contradicted memory whose new value is known: the correction states it;
  re-anchor location   a moved memory: the correction cites where the definition is now.

requests and click are left out: other checks use them to look at the verifier independently.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import random
import sys
import tarfile
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from eval_relocation import fetch

from memstore import Citation, Kind, Memory, Surface
from memstore.harness.scenarios.mining import Mined, mine
from memstore.verify import GitCodebase, Verdict, VerdictStatus, Verifier, verify_memories
from memstore.verify.history import HistoryBuilder

RELEASES = {
    "attrs": ["21.4.0", "22.2.0", "23.1.0", "24.2.0"],
    "jinja2": ["2.11.3", "3.0.3", "3.1.2", "3.1.4"],
    "packaging": ["20.9", "21.3", "22.0", "23.2", "24.1"],
    "pluggy": ["0.13.1", "1.0.0", "1.3.0", "1.5.0"],
    "urllib3": ["1.26.18", "2.0.7", "2.2.3"],
    "itsdangerous": ["1.1.0", "2.0.1", "2.1.2", "2.2.0"],
}
# Never looked at while the verifier was tuned on the projects above: the honest check that the
# fixes generalise (python evals/bench/eval_verdicts.py --packages holdout).
HOLDOUT = {
    "markupsafe": ["2.0.1", "2.1.3", "2.1.5"],
    "wheel": ["0.37.1", "0.40.0", "0.43.0"],
    "tomli": ["1.2.3", "2.0.1"],
}
# Mined into scenarios only (scenarios/mined/), never scored here nor looked at while the verifier was tuned.
SCENARIOS_ONLY = {
    "chardet": ["5.0.0", "5.2.0"],
}
EXPECTED = {
    "valid": VerdictStatus.VALID,
    "moved": VerdictStatus.REANCHORED,
    "contradicted": VerdictStatus.CONTRADICTED,
    "missing": VerdictStatus.MISSING,
    "unsupported": VerdictStatus.UNSUPPORTED,
}
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def source_files(sdist: Path) -> dict[str, bytes]:
    """The package's Python files and its metadata, as released (paths kept: ``src/`` moves matter)."""
    files = {}
    with tarfile.open(sdist) as tar:
        for member in tar.getmembers():
            parts = member.name.split("/", 1)
            keep = len(parts) == 2 and (parts[1].endswith(".py") or parts[1] in {"setup.cfg", "pyproject.toml"})
            if member.isfile() and keep and not parts[1].startswith(("tests/", "docs/", "examples/")):
                data = tar.extractfile(member)
                if data is not None:
                    files[parts[1]] = data.read()
    return files


def as_memory(item: Mined, commit: str, number: int) -> Memory:
    citation = Citation(item.path, item.line, snippet=item.snippet, commit=commit)
    return Memory(
        id=f"mem_{number:026d}", repo="bench/verdicts", kind=Kind.FACT, subject=item.subject, fact=item.fact,
        citations=(citation,), reason="Learned while working on the code.", author="agent",
        surface=Surface.CODING_AGENT, created_at=T0, refreshed_at=T0,
    )  # fmt: skip


def load_verifier(reference: str | None) -> Verifier | None:
    if not reference:
        return None
    module, _, name = reference.partition(":")
    return importlib.import_module(module).__dict__[name]()  # type: ignore[no-any-return]


class Score:
    def __init__(self) -> None:
        self.tally: Counter[str] = Counter()
        self.confusion: Counter[tuple[str, str]] = Counter()
        self.mistakes: list[str] = []

    def add(self, where: str, item: Mined, verdict: Verdict) -> None:
        t = self.tally
        want = EXPECTED[item.truth]
        got = verdict.status
        t["memories"] += 1
        t[f"n {item.truth}"] += 1
        self.confusion[(item.truth, got.value)] += 1
        right = got is want
        t["right"] += right
        t["uncertain"] += bool(getattr(verdict, "uncertain", ""))
        t["uncertain right"] += bool(getattr(verdict, "uncertain", "")) and right
        t[f"right {item.truth}"] += right
        usable_truth = item.truth in {"valid", "moved"}
        if usable_truth and not got.usable:
            t["false invalidation"] += 1
        if not usable_truth and got.usable:
            t["missed bad"] += 1
        if item.truth == "contradicted" and item.new_value is not None:
            t["corrections due"] += 1
            value = item.new_value.strip("\"'")
            fact = verdict.corrected.fact if verdict.corrected is not None else ""
            fixed = got is VerdictStatus.CONTRADICTED and value in fact
            t["corrections right"] += fixed
            if not fixed and len(self.mistakes) < 400:
                self.mistakes.append(f"{where} correction: want {value!r}, got {fact[:90]!r}")
        if item.truth == "moved" and got is VerdictStatus.REANCHORED and verdict.corrected is not None:
            t["reanchors"] += 1
            cited = verdict.corrected.citations[0] if verdict.corrected.citations else None
            t["reanchors right"] += cited is not None and (cited.path, cited.line) == (item.now_path, item.now_line)
        if not right and len(self.mistakes) < 400:
            self.mistakes.append(f"{where} {item.truth}->{got.value} {item.path}:{item.line} {item.fact[:70]!r}: "
                                 f"{verdict.reason[:120]}")  # fmt: skip


def history(package: str, versions: list[str], cache: Path) -> HistoryBuilder:
    """Each release committed on top of the previous one, tagged with its version."""
    b = HistoryBuilder()
    previous: set[str] = set()
    for version in versions:
        files = source_files(fetch(package, version, cache))
        for path in sorted(previous - set(files)):
            b.remove(path)
        for path, data in sorted(files.items()):
            b.write(path, data)
        previous = set(files)
        b.commit(f"{package} {version}", label=version)
        b.tag(version)
    return b


def evaluate(package: str, versions: list[str], args: argparse.Namespace, score: Score, timing: list[float]) -> None:
    b = history(package, versions, args.cache)
    verifier = load_verifier(args.verifier)
    with tempfile.TemporaryDirectory() as tmp:
        built = b.build(Path(tmp) / package, bare=True)
        for old, new in [*itertools.pairwise(versions), (versions[0], versions[-1])]:
            before = GitCodebase(built.path, built.commits[old])
            after = GitCodebase(built.path, built.commits[new])
            items = mine(before, after, kinds=args.kinds.split(","), limit=args.per_pair, seed=args.seed)
            memories = [as_memory(m, built.commits[old], i) for i, m in enumerate(items)]
            verify_memories(memories, after, verifier=verifier)  # warm the caches
            started = time.perf_counter()
            verdicts = verify_memories(memories, after, verifier=verifier)
            timing.append((time.perf_counter() - started) / max(len(memories), 1))
            for item, verdict in zip(items, verdicts, strict=True):
                score.add(f"{package} {old}->{new}", item, verdict)


def report(score: Score, timing: list[float], show: int) -> None:
    t = score.tally
    n = t["memories"]
    print(f"{n:,} memories mined from release histories; truth from the syntax trees of both releases")
    print(f"  {'class':<14}{'n':>6}{'right':>9}")
    for truth in EXPECTED:
        count = t[f"n {truth}"]
        print(f"  {truth:<14}{count:>6}{t[f'right {truth}'] / max(count, 1):>9.1%}")
    usable = t["n valid"] + t["n moved"]
    bad = n - usable
    print(f"  verdict accuracy:          {t['right'] / max(n, 1):>7.1%}   (target >= 97%)")
    print(f"  false invalidation:        {t['false invalidation'] / max(usable, 1):>7.2%}   (target <= 1%)")
    print(f"  missed bad:                {t['missed bad'] / max(bad, 1):>7.2%}   (target <= 1%)")
    print(f"  corrected value right:     {t['corrections right'] / max(t['corrections due'], 1):>7.1%}   "
          f"of {t['corrections due']} (target >= 90%)")  # fmt: skip
    print(f"  re-anchor location right:  {t['reanchors right'] / max(t['reanchors'], 1):>7.1%}   of {t['reanchors']}")
    sure = t["uncertain right"] / max(t["uncertain"], 1)
    print(
        f"  marked uncertain:          {t['uncertain']:>7}   ({sure:.1%} of them right: what a second judge could take)"
    )
    per_thousand = 1000 * sum(timing) / max(len(timing), 1)
    print(f"  1,000 memories, warm:      {per_thousand:>7.3f} s   (target < 1 s)")
    print("  confusion (label -> verdict):")
    verdicts = [v.value for v in VerdictStatus]
    print("    " + " " * 14 + "".join(f"{v[:11]:>12}" for v in verdicts))
    for truth in EXPECTED:
        print(f"    {truth:<14}" + "".join(f"{score.confusion[(truth, v)]:>12}" for v in verdicts))
    for line in score.mistakes[:show]:
        print("   ", line)


def _project_row(package: str, t: Counter[str]) -> str:
    n = t["memories"]
    usable = t["n valid"] + t["n moved"]
    return (
        f"  {package:<14}{n:>9}{t['right'] / max(n, 1):>10.1%}{t['false invalidation'] / max(usable, 1):>11.2%}"
        f"{t['missed bad'] / max(n - usable, 1):>12.2%}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--packages", default=",".join(RELEASES), help="or 'holdout' (default: %(default)s)")
    parser.add_argument("--per-pair", type=int, default=60, help="memories mined per release pair")
    parser.add_argument(
        "--kinds",
        default="constant,default,definition,adversarial",
        help="which memories to mine (add 'hard' for the sorts the reference verifier is known to get wrong)",
    )
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "memstore-eval" / "sdists")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--verifier", default=None, help="module:factory of a Verifier (default: the reference)")
    parser.add_argument("--show-mistakes", type=int, default=10)
    parser.add_argument(
        "--build-repo",
        metavar="DIR",
        type=Path,
        default=None,
        help="only build a git repository of --packages' releases (tagged) in DIR, for memstore mine",
    )
    args = parser.parse_args(argv)
    if args.build_repo is not None:
        package = args.packages.split(",")[0]
        versions = {**RELEASES, **HOLDOUT, **SCENARIOS_ONLY}[package]
        built = history(package, versions, args.cache).build(args.build_repo)
        print(f"{built.path}: {package} {', '.join(versions)} (tags)")
        return 0
    random.seed(args.seed)
    score, timing = Score(), []
    known = {**RELEASES, **HOLDOUT}
    names = list(HOLDOUT) if args.packages == "holdout" else args.packages.split(",")
    rows = []
    for package in names:
        before = Counter(score.tally)
        evaluate(package, known[package], args, score, timing)
        rows.append(_project_row(package, score.tally - before))
    print(f"  {'project':<14}{'memories':>9}{'accuracy':>10}{'false inv':>11}{'missed bad':>12}")
    for row in rows:
        print(row)
    report(score, timing, args.show_mistakes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
