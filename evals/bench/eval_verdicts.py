"""Verdict accuracy on real release histories, labelled by a method independent of the verifier.

Run:  python evals/bench/eval_verdicts.py                       (downloads sdists with pip; a few minutes)
      python evals/bench/eval_verdicts.py --packages new        (only the projects added for issue 25)
      python evals/bench/eval_verdicts.py --packages holdout    (never looked at while the verifier was tuned)
      python evals/bench/eval_verdicts.py --verifier mypkg.judge:make   (score any Verifier)

A by-hand evaluation, not a test. It fetches source releases of well-known Python packages from
PyPI (``pip download``, cached under --cache), commits each release on top of the previous one
in a git repository with the paths as released (``src/`` moves included), and for each release
pair mines memories at the older release the way a coding agent writes them
(`memstore.harness.scenarios.mining`). Their truth at the newer release comes from the syntax
trees of both releases (and git's rename detection for a file whose path is gone), never from
the verifier. Each memory is verified at the newer release and scored:

  accuracy             the verdict is the class the label calls for (valid -> VALID,
                       moved -> REANCHORED, contradicted -> CONTRADICTED, missing -> MISSING,
                       unsupported -> UNSUPPORTED);
  false invalidation   a still-true memory (valid, moved) judged unusable;
  missed bad           a bad memory (contradicted, missing, unsupported) judged usable;
  corrected value      a contradicted memory whose current value is known (a changed constant,
                       default, signature, base or pin; a renamed name; the code's value behind a
                       near miss): the correction states it and no longer states the old one;
  old value kept       a correction that still states the value it was to replace (must be 0);
  citation accuracy    where the verdict puts the memory's citation now (its re-anchored citation,
                       else where the check followed it), against the syntax trees: valid, the
                       same line; moved, the line the fact stands at now; a deleted file, missing,
                       never another file. (Citation by citation against git's own line mapping:
                       evals/bench/eval_relocation.py.)

Two sets of projects: the original six (attrs, jinja2, packaging, pluggy, urllib3, itsdangerous:
constants, defaults, definitions and adversarial citations, as first measured), and five added
for issue 25 (pyparsing, httpx, platformdirs, starlette, flask) with every kind the miner writes:
signatures, class bases, pinned dependencies, renamed names, near misses and claims the cited
line does not make; there the rarer classes are drawn first (`NEW_QUOTAS`), so each has cases
enough to be measured. requests and click are left out: other checks use them to look at the
verifier independently.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import random
import re
import sys
import tarfile
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import handwritten
from eval_relocation import fetch
from score_handwritten import HandScore
from score_handwritten import evaluate as evaluate_handwritten
from score_handwritten import report as report_handwritten

from memstore import Citation, Kind, Memory, Surface
from memstore.harness.scenarios.mining import Mined, mine
from memstore.verify import CitationStatus, GitCodebase, Verdict, VerdictStatus, Verifier, verify_memories
from memstore.verify.history import HistoryBuilder

RELEASES = {
    "attrs": ["21.4.0", "22.2.0", "23.1.0", "24.2.0"],
    "jinja2": ["2.11.3", "3.0.3", "3.1.2", "3.1.4"],
    "packaging": ["20.9", "21.3", "22.0", "23.2", "24.1"],
    "pluggy": ["0.13.1", "1.0.0", "1.3.0", "1.5.0"],
    "urllib3": ["1.26.18", "2.0.7", "2.2.3"],
    "itsdangerous": ["1.1.0", "2.0.1", "2.1.2", "2.2.0"],
}
ORIGINAL_KINDS = "constant,default,definition,adversarial"
# Added for issue 25, with every kind of memory; not looked at before the verifier work of issue 25.
NEW = {
    "pyparsing": ["3.0.0", "3.0.9", "3.1.4"],
    "httpx": ["0.18.2", "0.23.3", "0.27.2"],
    "platformdirs": ["2.6.2", "3.11.0", "4.3.6"],
    "starlette": ["0.14.2", "0.20.4", "0.37.2"],
    "flask": ["2.0.3", "2.2.5", "3.0.3"],
}
NEW_KINDS = "constant,default,definition,signature,base,dependency,adversarial,near-miss,literal"
# Per release pair of a new project: how many of each class are kept, the rarer first.
NEW_QUOTAS = {
    "renamed identifier": 30,
    "changed signature": 12,
    "changed default": 8,
    "changed base": 6,
    "changed constant": 6,
    "changed version": 4,
    "changed dependency": 4,
    "near miss": 8,
    "claim the line does not make": 6,
    "deleted file": 6,
    "gone": 5,
    "moved": 10,
    "valid": 5,
    "unrelated citation": 5,
}
# Never looked at while the verifier was tuned: the honest check that the fixes generalise
# (python evals/bench/eval_verdicts.py --packages holdout).
HOLDOUT = {
    "markupsafe": ["2.0.1", "2.1.3", "2.1.5"],
    "wheel": ["0.37.1", "0.40.0", "0.43.0"],
    "tomli": ["1.2.3", "2.0.1"],
}
# Mined into scenarios only (scenarios/mined/), never scored here nor looked at while the verifier was tuned.
SCENARIOS_ONLY = {
    "chardet": ["5.0.0", "5.2.0"],
    "boltons": ["21.0.0", "24.0.0"],
    "toolz": ["0.11.2", "0.12.1"],
    "arrow": ["1.2.3", "1.3.0"],
    "cattrs": ["22.2.0", "23.2.3"],
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


def class_of(item: Mined) -> str:
    """The class a memory is reported in."""
    if item.sort == "renamed":
        return "renamed identifier"
    if item.sort == "near-miss":
        return "near miss"
    if item.sort == "literal":
        return "claim the line does not make"
    if item.truth == "contradicted" and item.new_value is not None:
        kind = "version" if item.kind == "constant" and "version" in item.subject.lower() else item.kind
        return f"changed {kind}"  # a constant, a version, a default, a signature, a base, a pin
    if item.truth == "contradicted":
        return "gone"
    if item.truth == "missing":
        return "deleted file"
    if item.truth == "unsupported":
        return "unrelated citation"
    return item.truth


def _said(fact: str, value: str, *, whole: bool = False, pin: bool = False) -> bool:
    """Whether ``fact`` states ``value`` (quotes aside): as a code span of its own (```(a, b)```
    for a list of parameters), or, for a single token, as a whole token."""
    core = value.strip("\"'")
    if not core:
        return False
    spans = {m.group(1).strip("()\"'") for m in re.finditer(r"`([^`]*)`", fact)}
    if core in spans or (pin and any(span.endswith(core) for span in spans)):
        return True
    if whole or "," in core or " " in core:
        return False  # a list is stated as a whole span, not as a part of one
    left = r"(?<![\w.])" if core[0].isalnum() or core[0] == "_" else ""
    right = r"(?![\w])" if core[-1].isalnum() or core[-1] == "_" else ""
    return re.search(left + re.escape(core) + right, fact) is not None


class Score:
    def __init__(self) -> None:
        self.tally: Counter[str] = Counter()
        self.confusion: Counter[tuple[str, str]] = Counter()
        self.classes: Counter[tuple[str, str]] = Counter()
        self.mistakes: list[str] = []
        self.judges: Counter[tuple[str, str]] = Counter()

    def add(self, where: str, item: Mined, verdict: Verdict) -> None:
        t = self.tally
        want, got, kind = EXPECTED[item.truth], verdict.status, class_of(item)
        right = got is want
        t["memories"] += 1
        t[f"n {item.truth}"] += 1
        self.confusion[(item.truth, got.value)] += 1
        self.classes[(kind, "n")] += 1
        self.classes[(kind, "right")] += right
        t["right"] += right
        t[f"right {item.truth}"] += right
        t["uncertain"] += bool(getattr(verdict, "uncertain", ""))
        t["uncertain right"] += bool(getattr(verdict, "uncertain", "")) and right
        judge = getattr(verdict, "judge", "") or "reference"
        self.judges[(judge, "n")] += 1
        self.judges[(judge, "right")] += right
        usable_truth = item.truth in {"valid", "moved"}
        if usable_truth and not got.usable:
            t["false invalidation"] += 1
        if not usable_truth and got.usable:
            t["missed bad"] += 1
        self._correction(where, item, verdict, kind)
        self._citation(item, verdict)
        if item.truth == "moved" and got is VerdictStatus.REANCHORED and verdict.corrected is not None:
            t["reanchors"] += 1
            cited = verdict.corrected.citations[0] if verdict.corrected.citations else None
            t["reanchors right"] += cited is not None and (cited.path, cited.line) == (item.now_path, item.now_line)
        if not right and len(self.mistakes) < 400:
            self.mistakes.append(f"{where} {kind}: {item.truth}->{got.value} {item.path}:{item.line} "
                                 f"{item.fact[:70]!r}: {verdict.reason[:120]}")  # fmt: skip

    def _correction(self, where: str, item: Mined, verdict: Verdict, kind: str) -> None:
        whole = item.kind in {"signature", "base", "dependency"}  # lists and pins: said as a whole span
        pin = item.kind == "dependency"  # a pin's version is said after its project's name
        if verdict.corrected is not None and item.old_value and item.truth == "contradicted":
            kept = item.new_value is not None and _said(verdict.corrected.fact, item.old_value, whole=whole, pin=pin)
            self.tally["old value kept"] += kept
        if item.truth != "contradicted" or item.new_value is None:
            return
        self.tally["corrections due"] += 1
        self.classes[(kind, "due")] += 1
        fact = verdict.corrected.fact if verdict.corrected is not None else ""
        fixed = (
            verdict.status is VerdictStatus.CONTRADICTED
            and _said(fact, item.new_value, pin=pin)
            and not (item.old_value and _said(fact, item.old_value, whole=whole, pin=pin))
        )
        self.tally["corrections right"] += fixed
        self.classes[(kind, "fixed")] += fixed
        if not fixed and len(self.mistakes) < 400:
            self.mistakes.append(f"{where} {kind} correction: want {item.new_value!r}, got {fact[:90]!r}")

    def _citation(self, item: Mined, verdict: Verdict) -> None:
        """Where the citation was followed, against the syntax trees: kept, moved to the fact's
        line, or missing with its file; other labels say nothing of where the line is."""
        check = verdict.checks[0] if verdict.checks else None
        if check is None or item.kind == "adversarial" or item.sort in {"near-miss", "literal"}:
            return
        if item.truth == "missing":
            right = check.status is CitationStatus.FILE_MISSING
            self.tally["deleted-file citations"] += 1
            self.tally["deleted-file citations right"] += right
        elif item.truth in {"valid", "moved"}:  # where the verdict says its citation is now
            corrected = verdict.corrected.citations[0] if verdict.corrected and verdict.corrected.citations else None
            now = (corrected.path, corrected.line) if corrected is not None else (check.path, check.line)
            right = check.status.readable and now == (item.now_path or item.path, item.now_line)
        else:
            return
        if not right and len(self.mistakes) < 400:
            want = f"{item.now_path}:{item.now_line}"
            self.mistakes.append(f"citation {item.truth} {item.path}:{item.line} -> {check.status.value} "
                                 f"{check.where}, want {want} {item.snippet.strip()[:50]!r}")  # fmt: skip
        self.tally["citations"] += 1
        self.tally["citations right"] += right


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


def _drawn(items: list[Mined], seed: str) -> list[Mined]:
    """The new projects' memories of a release pair, class by class up to `NEW_QUOTAS`."""
    rng = random.Random(seed)
    kept: list[Mined] = []
    for kind, quota in NEW_QUOTAS.items():
        found = [m for m in items if class_of(m) == kind]
        kept += rng.sample(found, min(quota, len(found)))
    return kept


def evaluate(package: str, versions: list[str], args: argparse.Namespace, score: Score, timing: list[float]) -> None:
    fixed = args.wording == "templates"  # the miner's first sentence of each kind; "varied": its wordings
    b = history(package, versions, args.cache)
    verifier = load_verifier(args.verifier)
    new = package in NEW or package in HOLDOUT
    with tempfile.TemporaryDirectory() as tmp:
        built = b.build(Path(tmp) / package, bare=True)
        for old, after_version in [*itertools.pairwise(versions), (versions[0], versions[-1])]:
            before = GitCodebase(built.path, built.commits[old])
            after = GitCodebase(built.path, built.commits[after_version])
            kinds = (NEW_KINDS if new else args.kinds).split(",")
            if new:
                items = mine(before, after, kinds=kinds, limit=400, seed=args.seed, balance=True, fixed_wording=fixed)
                items = _drawn(items, f"{args.seed}|{package}|{old}|{after_version}")
            else:
                items = mine(before, after, kinds=kinds, limit=args.per_pair, seed=args.seed, fixed_wording=fixed)
            memories = [as_memory(m, built.commits[old], i) for i, m in enumerate(items)]
            verify_memories(memories, after, verifier=verifier)  # warm the caches
            started = time.perf_counter()
            verdicts = verify_memories(memories, after, verifier=verifier)
            timing.append((time.perf_counter() - started) / max(len(memories), 1))
            for item, verdict in zip(items, verdicts, strict=True):
                score.add(f"{package} {old}->{after_version}", item, verdict)


def _rate(part: int, whole: int) -> str:
    return f"{part / whole:>7.1%}" if whole else "      -"


def report(score: Score, timing: list[float], show: int) -> None:
    t = score.tally
    n = t["memories"]
    print(f"{n:,} memories mined from release histories; truth from the syntax trees of both releases")
    print(f"  {'label':<14}{'n':>6}{'right':>9}")
    for truth in EXPECTED:
        count = t[f"n {truth}"]
        print(f"  {truth:<14}{count:>6}{_rate(t[f'right {truth}'], count):>9}")
    print(f"  {'class':<30}{'n':>6}{'right':>9}{'corrected':>14}")
    classes = sorted({k for k, _ in score.classes})
    for kind in classes:
        count, due = score.classes[(kind, "n")], score.classes[(kind, "due")]
        fixed = f"{score.classes[(kind, 'fixed')]}/{due}" if due else "-"
        print(f"  {kind:<30}{count:>6}{_rate(score.classes[(kind, 'right')], count):>9}{fixed:>14}")
    usable = t["n valid"] + t["n moved"]
    bad = n - usable
    print(f"  verdict accuracy:          {_rate(t['right'], n)}   (target >= 98%)")
    print(f"  false invalidation:        {_rate(t['false invalidation'], usable)}   (target <= 1%)")
    print(f"  missed bad:                {_rate(t['missed bad'], bad)}   (target <= 1%)")
    print(f"  corrected value right:     {_rate(t['corrections right'], t['corrections due'])}   "
          f"of {t['corrections due']} (target >= 90%)")  # fmt: skip
    print(f"  corrections keeping the old value: {t['old value kept']}   (target 0)")
    print(f"  citation accuracy:         {_rate(t['citations right'], t['citations'])}   of {t['citations']} "
          f"(target >= 98%); deleted files missing: {t['deleted-file citations right']}/"
          f"{t['deleted-file citations']}")  # fmt: skip
    print(f"  re-anchor location right:  {_rate(t['reanchors right'], t['reanchors'])}   of {t['reanchors']}")
    print(f"  marked uncertain:          {t['uncertain']:>7}   ({_rate(t['uncertain right'], t['uncertain'])} right)")
    judges = sorted({j for j, _ in score.judges})
    print("  by judge (the step that decided):  " + ", ".join(
        f"{j} {score.judges[(j, 'n')]} ({_rate(score.judges[(j, 'right')], score.judges[(j, 'n')]).strip()} right)"
        for j in judges))  # fmt: skip
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
        f"  {package:<14}{n:>9}{_rate(t['right'], n):>10}{_rate(t['false invalidation'], usable):>11}"
        f"{_rate(t['missed bad'], n - usable):>12}"
    )


def _packages(chosen: str) -> dict[str, list[str]]:
    every = {**RELEASES, **NEW, **HOLDOUT}
    named = {"holdout": HOLDOUT, "new": NEW, "original": RELEASES, "all": {**RELEASES, **NEW}}
    if chosen in named:
        return named[chosen]
    return {name: every[name] for name in chosen.split(",")}


def handwritten_benchmark(args: argparse.Namespace) -> None:
    """The hand-written benchmark: the tuning projects and the hold-out, reported apart."""
    verifier = load_verifier(args.verifier)
    chosen = handwritten.projects()
    if args.projects:
        chosen = {name: chosen[name] for name in args.projects.split(",")}
    scores = {"tune": HandScore(), "holdout": HandScore()}
    timing: list[float] = []
    print(f"  {'project':<16}{'split':<9}{'memories':>9}{'accuracy':>10}{'false inv':>11}{'missed bad':>12}"
          f"{'agreement':>11}")  # fmt: skip
    for project in chosen.values():
        score = scores[project.split]
        before = Counter(score.tally)
        evaluate_handwritten(project, score, verifier, timing)
        t = score.tally - before
        if t["memories"]:
            bad = t["wordings"] - t["usable"]
            print(f"  {project.name:<16}{project.split:<9}{t['memories']:>9}{_rate(t['right'], t['wordings']):>10}"
                  f"{_rate(t['false invalidation'], t['usable']):>11}{_rate(t['missed bad'], bad):>12}"
                  f"{_rate(t['agree'], t['memories']):>11}")  # fmt: skip
    report_handwritten("hand-written, tuning projects", scores["tune"], args.show_mistakes)
    report_handwritten("hand-written, hold-out (failures not shown)", scores["holdout"], 0)
    per_thousand = 1000 * sum(timing) / max(len(timing), 1)
    print(f"  1,000 memories (wordings), warm: {per_thousand:.3f} s   (target < 1 s)")


def template_benchmark(args: argparse.Namespace) -> None:
    """The template benchmark: memories mined from release histories (the miner's sentences)."""
    random.seed(args.seed)
    score, timing = Score(), []
    rows = []
    for package, versions in _packages(args.packages).items():
        before = Counter(score.tally)
        evaluate(package, versions, args, score, timing)
        rows.append(_project_row(package, score.tally - before))
    print(f"  {'project':<14}{'memories':>9}{'accuracy':>10}{'false inv':>11}{'missed bad':>12}")
    for row in rows:
        print(row)
    report(score, timing, args.show_mistakes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", choices=["all", "handwritten", "templates"], default="all",
                        help="which benchmark (default: all: the hand-written one, then the templates)")  # fmt: skip
    parser.add_argument("--projects", default="", help="hand-written projects to run, by name (default: all)")
    parser.add_argument(
        "--packages", default="all", help="templates: all, original, new, holdout or names (default: all)"
    )
    parser.add_argument("--per-pair", type=int, default=60, help="memories mined per release pair (original set)")
    parser.add_argument(
        "--wording",
        choices=["templates", "varied"],
        default="templates",
        help="templates: each mined fact in the miner's one sentence of its kind (the template benchmark); "
        "varied: in the several wordings scenarios use (memstore.harness.scenarios.wordings)",
    )
    parser.add_argument("--kinds", default=ORIGINAL_KINDS, help="what the original set mines (default: %(default)s)")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "memstore-eval" / "sdists")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--verifier", default=None, help="module:factory of a Verifier (default: the reference)")
    parser.add_argument("--show-mistakes", type=int, default=10, help="mistakes listed (never the hold-out's)")
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
        versions = {**RELEASES, **NEW, **HOLDOUT, **SCENARIOS_ONLY}[package]
        built = history(package, versions, args.cache).build(args.build_repo)
        print(f"{built.path}: {package} {', '.join(versions)} (tags)")
        return 0
    if args.set in {"all", "handwritten"}:
        print("== Hand-written memories (evals/bench/memories/): facts people wrote, in three wordings each")
        handwritten_benchmark(args)
    if args.set in {"all", "templates"}:
        print("== Templates: memories mined from release histories in the miner's sentences (reported apart)")
        template_benchmark(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
