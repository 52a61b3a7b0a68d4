"""Verification benchmark: citation checks per second, cold and warm, against one `git show` per citation.

Run:  python evals/bench/bench_verify.py        (about a minute)

Builds a repository of 2,000 files and 500 commits (edits, insertions, deletions,
renames), cites 1,000 memories with 3 citations each at random commits of its history,
and verifies them all at HEAD:
  cold:     a new process: open the repository, read what is needed, judge all memories;
  warm:     the same checks again in that process (caches full);
  baseline: one `git show HEAD:path` subprocess per citation, comparing the cited line.
Targets (issue 3): warm >= 20,000 checks/s; >= 30x the baseline; 1,000 memories cold < 1 s.

Then the worst cases under the 1 MiB cap (issue 10): a file of ``}`` lines with one line
inserted, a lock file rewritten in a fifth of its lines, and one line of a megabyte changed;
the time of the first citation into each (both versions read, normalised and diffed) and of
a later one (cached), beside difflib's longest-matching-block diff, which the verifier used
before, on the braces file at 4,000 lines (it grows with the square of the length).
Target: any file under the cap checked in well under 100 ms.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

from memstore import Citation, Kind, Memory, Surface
from memstore.verify.history import HistoryBuilder

T0 = datetime(2026, 1, 5, tzinfo=UTC)
WORDS = ["alpha", "beta", "gamma", "delta", "config", "pool", "logger", "client", "server", "route", "version"]


def _file(rng: random.Random, n: int) -> str:
    out = [f'"""Module {n}."""', "", "import os", ""]
    for f in range(rng.randrange(4, 14)):
        name = f"{rng.choice(WORDS)}_{f}"
        out += [f"def {name}(argument):", "    argument."]
        for _ in range(rng.randrange(1, 6)):
            out.append(f"    {rng.choice(WORDS)} = {rng.randrange(100)}")
        out += ["    return None", "}", ""]
    return "\n".join(out) + "\n"


def build_repo(path: Path, files: int, commits: int, seed: int) -> dict[str, str]:
    rng = random.Random(seed)
    b = HistoryBuilder()
    names = [f"pkg{n % 40}/mod{n}.py" for n in range(files)]
    for n, name in enumerate(names):
        b.write(name, _file(rng, n))
    b.commit("initial", label="c0")
    for c in range(1, commits):
        for _ in range(rng.randrange(1, 6)):
            name = rng.choice(names)
            length = b.text(name).count("\n")
            action = rng.random()
            if action < 0.45:
                b.insert(name, rng.randrange(1, length + 2), f"# note {c}\nsetting_{c} = {c}\n")
            elif action < 0.7 and length > 10:
                first = rng.randrange(5, length - 2)
                b.delete_lines(name, first, min(length, first + rng.randrange(0, 3)))
            elif action < 0.95:
                values = sorted(set(re.findall(r"= \d+\n", b.text(name))))
                if values:
                    b.replace(name, rng.choice(values), f"= {100 + c}\n")
            else:
                new = name.replace("/mod", "/renamed_mod")
                if new not in b.files():
                    b.rename(name, new)
                    names[names.index(name)] = new
        b.commit(f"change {c}", label=f"c{c}")
    return dict(b.build(path).commits)


def make_memories(repo: Path, commits: dict[str, str], count: int, seed: int) -> list[dict[str, object]]:
    rng = random.Random(seed)
    labels = list(commits)
    trees: dict[str, list[str]] = {}
    memories = []
    for m in range(count):
        citations = []
        for _ in range(3):
            sha = commits[rng.choice(labels)]
            if sha not in trees:
                out = subprocess.run(
                    ["git", "-C", str(repo), "ls-tree", "-r", "--name-only", sha],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
                trees[sha] = out.split()
            path = rng.choice(trees[sha])
            citations.append(Citation(path, rng.randrange(1, 40), commit=sha))
        memories.append(
            Memory(
                id=f"mem_{m:05d}",
                repo="bench/repo",
                kind=Kind.FACT,
                subject=f"{rng.choice(WORDS)} handling",
                fact=f"The {rng.choice(WORDS)} setting is read in one place.",
                citations=tuple(citations),
                reason="bench",
                author="ana",
                surface=Surface.CODING_AGENT,
                created_at=T0,
                refreshed_at=T0,
            ).to_dict()
        )
    return memories


COLD = textwrap.dedent(
    """
    import json, sys, time
    start = time.perf_counter()
    from memstore import Memory
    from memstore.verify import GitCodebase, verify_memories
    imported = time.perf_counter()
    memories = [Memory.from_dict(m) for m in json.load(open(sys.argv[2]))]
    loaded = time.perf_counter()
    verdicts = verify_memories(memories, GitCodebase(sys.argv[1], "HEAD"))
    done = time.perf_counter()
    checks = sum(len(v.checks) for v in verdicts)
    statuses = {}
    for v in verdicts:
        for c in v.checks:
            statuses[c.status.value] = statuses.get(c.status.value, 0) + 1
    print(json.dumps({"import": imported - start, "verify": done - loaded, "checks": checks, "statuses": statuses}))
    """
)


def _worst_cases(tmp: Path) -> list[tuple[str, str, str, int]]:
    """(name, old text, new text, a cited line that moved or changed) for files just under the cap."""
    rng = random.Random(11)
    count = 1024 * 1024 // 2 - 8
    braces = "}\n" * count
    moved = "}\n" * (count // 2) + "inserted\n" + "}\n" * (count - count // 2)
    lock = "".join(f'    "node_modules/pkg{i}": "sha512-{rng.getrandbits(96):x}",\n' for i in range(16_000))
    relocked = "".join(line.replace('",', '0",') if rng.random() < 0.2 else line for line in lock.splitlines(True))
    line = "x" * (1024 * 1024 - 100) + "\n"
    return [
        (f"{count:,} lines of '}}', one inserted", braces, moved, count // 2 + 10),
        (f"lock file, {len(lock) // 1024:,} KB, a fifth of its lines changed", lock, relocked, 8_001),
        ("one line of a megabyte, changed", line, "y" + line, 1),
    ]


def worst_case_report(tmp: Path) -> None:
    """Time per citation on the files that made the old diff quadratic."""
    import difflib

    from memstore.verify import GitCodebase, verify_citation

    print("\nworst cases under the 1 MiB cap (time per citation):")
    slowest = 0.0
    for index, (name, old, new, line) in enumerate(_worst_cases(tmp)):
        builder = HistoryBuilder()
        builder.write("f.txt", old)
        builder.commit("old", label="old")
        builder.write("f.txt", new)
        builder.commit("new", label="new")
        built = builder.build(tmp / f"worst{index}")
        codebase = GitCodebase(built.path, "HEAD")
        start = time.perf_counter()
        check = verify_citation(codebase, Citation("f.txt", line, commit=built.commits["old"]))
        first = time.perf_counter() - start
        start = time.perf_counter()
        verify_citation(codebase, Citation("f.txt", max(1, line - 3), commit=built.commits["old"]))
        later = time.perf_counter() - start
        slowest = max(slowest, first)
        print(f"  {name:<52} first {first * 1000:7.1f} ms, later {later * 1000:6.2f} ms   ({check.status.value})")
    small = 4_000
    old_lines = ["}"] * small
    new_lines = ["}"] * (small // 2) + ["inserted"] + ["}"] * (small // 2)
    start = time.perf_counter()
    difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes()
    baseline = time.perf_counter() - start
    print(
        f"  baseline, difflib on the braces file at {small:,} lines: {baseline * 1000:7.1f} ms "
        f"(x{(1024 * 1024 // 2 / small) ** 2:,.0f} at full size, by its square growth)"
    )
    verdict = "MET" if slowest < 0.1 else "MISSED"
    print(f"  worst first citation under the cap < 100 ms:  {slowest * 1000:.1f} ms {verdict}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=2_000, help="files in the repository (default: %(default)s)")
    parser.add_argument("--commits", type=int, default=500, help="commits in its history (default: %(default)s)")
    parser.add_argument("--memories", type=int, default=1_000, help="memories, 3 citations each (default: %(default)s)")
    parser.add_argument("--baseline-sample", type=int, default=300, help="citations timed with git show")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)

    from memstore.verify import GitCodebase, verify_memories

    with tempfile.TemporaryDirectory(prefix="memstore-bench-verify-") as tmp:
        repo = Path(tmp) / "repo"
        start = time.perf_counter()
        commits = build_repo(repo, args.files, args.commits, args.seed)
        print(
            f"repository: {args.files:,} files, {len(commits):,} commits, built in {time.perf_counter() - start:.2f} s"
        )
        memories = make_memories(repo, commits, args.memories, args.seed)
        data = Path(tmp) / "memories.json"
        data.write_text(json.dumps(memories))

        start = time.perf_counter()
        cold_out = subprocess.run(
            [sys.executable, "-c", COLD, str(repo), str(data)], capture_output=True, text=True, check=True
        ).stdout
        process_s = time.perf_counter() - start
        cold = json.loads(cold_out)
        checks = cold["checks"]
        print(f"\n{args.memories:,} memories, {checks:,} citation checks at HEAD: {cold['statuses']}")
        print(
            f"  cold, new process:  {cold['verify']:.3f} s verifying ({checks / cold['verify']:,.0f} checks/s); "
            f"{process_s:.2f} s for the whole process incl. {cold['import']:.2f} s of imports"
        )

        parsed = [Memory.from_dict(m) for m in memories]
        codebase = GitCodebase(repo, "HEAD")
        verify_memories(parsed, codebase)
        rounds, start = 5, time.perf_counter()
        for _ in range(rounds):
            verify_memories(parsed, codebase)
        warm = rounds * checks / (time.perf_counter() - start)
        print(f"  warm, same process: {warm:,.0f} checks/s")

        sample = [c for m in parsed for c in m.citations][: args.baseline_sample]
        start = time.perf_counter()
        for citation in sample:
            shown = subprocess.run(["git", "-C", str(repo), "show", f"HEAD:{citation.path}"], capture_output=True)
            lines = shown.stdout.decode(errors="replace").split("\n")
            _ = shown.returncode == 0 and citation.line <= len(lines)
        baseline = len(sample) / (time.perf_counter() - start)
        print(f"  baseline, git show per citation: {baseline:,.0f} checks/s")

        print("\ntargets:")
        print(f"  warm >= 20,000 checks/s:        {warm:>10,.0f}   {'MET' if warm >= 20_000 else 'MISSED'}")
        print(
            f"  warm / baseline >= 30x:         {warm / baseline:>10,.0f}x  "
            f"{'MET' if warm / baseline >= 30 else 'MISSED'}"
        )
        print(f"  cold / baseline:                {checks / cold['verify'] / baseline:>10,.0f}x")
        verdict = "MET" if cold["verify"] < 1.0 else "MISSED"
        print(f"  1,000 memories cold < 1 s:      {cold['verify']:>10.3f} s {verdict}")
        worst_case_report(Path(tmp))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
