"""The default run against an earlier commit's, side by side: ``memstore eval`` timed on both.

Run:  python evals/bench/bench_speed.py                 (about five minutes: both default runs)
      python evals/bench/bench_speed.py --against COMMIT --workers 2 --seed 0 [--quick]

The earlier commit (3fb2d4e by default, issue 44's reference; 11ea0a9 was issue 23's) is checked
out in a temporary git worktree and run from there with the same interpreter, the same seed, the
same number of workers and the same agents (the four default arms of both: no-memory, trusting,
blind-trusting, jit-verify), on the same machine, one after the other: first the earlier commit,
then this checkout.
Each run's wall time (the command, from start to exit) and run time (the units, from
``timings.json``) are printed, with the ratio earlier / now. ``results.json`` is compared too:
equal where the engine did not change on purpose; where it did, the arms whose overall figures
differ are named (the stub agents' answers changed between the two commits, so the default run's
results may differ by design: see the closing note of issue 23).

``--quick`` passes ``--quick`` to this checkout only where the earlier commit lacks it; use it
only to try the script out.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AGAINST = "3fb2d4e"


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout.strip()


def metadata_of(tree: Path, folder: Path) -> Path:
    """A folder holding ``tree``'s own distribution metadata (its version and entry points, read from
    its pyproject.toml), to put on the path before the installed memstore's: an earlier commit must
    not load the plug-ins this checkout declares (modules it does not have)."""
    project = tomllib.loads((tree / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = re.search(r'__version__ = "(.+)"', (tree / "memstore" / "__init__.py").read_text(encoding="utf-8"))
    version = project.get("version") or (declared[1] if declared else "0")  # a dynamic version: the package's own
    info = folder / f"{project['name'].replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {version}\n")
    groups = {"console_scripts": project.get("scripts", {}), **project.get("entry-points", {})}
    lines = [
        f"[{group}]\n" + "".join(f"{name} = {ref}\n" for name, ref in entries.items())
        for group, entries in groups.items()
    ]
    (info / "entry_points.txt").write_text("\n".join(lines))
    if project["name"] != "agent-memstore":  # an earlier commit, from before the distribution's rename: the
        hidden = folder / "agent_memstore-0.dist-info"  # installed agent-memstore (this checkout) is hidden
        hidden.mkdir()  # behind an empty one of that name, so its entry points are not the earlier code's plug-ins
        (hidden / "METADATA").write_text("Metadata-Version: 2.1\nName: agent-memstore\nVersion: 0\n")
    return folder


def timed_run(label: str, tree: Path, out: Path, args: argparse.Namespace, extra: list[str]) -> dict[str, object]:
    """One ``memstore eval`` from ``tree``'s code and metadata; its wall and run seconds."""
    argv = [sys.executable, "-m", "memstore", "eval", "--out", str(out), "--seed", str(args.seed)]
    argv += ["--workers", str(args.workers), *(a for agent in args.agents for a in ("--agent", agent)), *extra]
    path = [str(tree)] if tree == ROOT else [str(tree), str(metadata_of(tree, out.parent / f"{label}-metadata"))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    helped = subprocess.run([*argv[:4], "--help"], cwd=tree, env=env, capture_output=True, text=True).stdout
    if "--no-fail" in helped:  # a failed gate is a finished run here (older commits lack the flag)
        argv.append("--no-fail")
    print(f"  {label}: running ...", flush=True)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1) or not (out / "results.json").exists():
        print(done.stdout[-2000:], done.stderr[-2000:], sep="\n")
        raise SystemExit(f"{label}: memstore eval exited {done.returncode}")
    timings = json.loads((out / "timings.json").read_text()) if (out / "timings.json").exists() else {}
    run_seconds = float(timings.get("seconds", float("nan")))
    print(f"  {label}: {wall:7.1f} s wall, {run_seconds:7.1f} s run", flush=True)
    return {"wall": wall, "run": run_seconds, "results": json.loads((out / "results.json").read_text())}


def differing_arms(before: dict[str, object], now: dict[str, object]) -> list[str]:
    """The arms whose overall figures differ between two ``results.json``."""
    old, new = before.get("arms", {}), now.get("arms", {})
    assert isinstance(old, dict)
    assert isinstance(new, dict)
    return sorted(a for a in {*old, *new} if old.get(a, {}).get("overall") != new.get(a, {}).get("overall"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", default=AGAINST, help="the earlier commit (default: %(default)s)")
    parser.add_argument("--workers", type=int, default=2, help="(default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="(default: %(default)s)")
    parser.add_argument("--quick", action="store_true", help="this checkout with --quick (a try-out, not a measure)")
    parser.add_argument(
        "--agent",
        dest="agents",
        action="append",
        default=None,
        help="an agent both runs use; repeat (default: the four default arms of 3fb2d4e and now; 11ea0a9 "
        "ran no-memory, trusting and jit-verify only)",
    )
    args = parser.parse_args(argv)
    args.agents = args.agents or ["no-memory", "trusting", "blind-trusting", "jit-verify"]
    commit = _git("rev-parse", "--short", args.against)
    head = _git("rev-parse", "--short", "HEAD")
    print(
        f"memstore default run: {commit} against this checkout ({head}), seed {args.seed}, {args.workers} workers, "
        f"agents {', '.join(args.agents)} on the default store"
    )
    with tempfile.TemporaryDirectory(prefix="memstore-bench-speed-") as folder:
        tree = Path(folder) / "tree"
        _git("worktree", "add", "--detach", str(tree), commit)
        try:
            before = timed_run(commit, tree, Path(folder) / "before", args, [])
            now = timed_run("now", ROOT, Path(folder) / "now", args, ["--quick"] if args.quick else [])
        finally:
            _git("worktree", "remove", "--force", str(tree))
    same = before["results"] == now["results"]
    for key in ("wall", "run"):
        ratio = before[key] / now[key]  # type: ignore[operator]
        print(f"  {key + ':':<5} {before[key]:.1f} s -> {now[key]:.1f} s: speed-up {commit} / now = {ratio:.2f}x")
    if same:
        print("  results.json: equal, byte for byte in content")
    else:
        arms = differing_arms(before["results"], now["results"])  # type: ignore[arg-type]
        print(f"  results.json: differs; overall figures differ for {', '.join(arms) or 'no arm'}")
    verdict = "MET" if before["wall"] / now["wall"] >= 2 else "MISSED"  # type: ignore[operator]
    print(f"  target: at least 2x faster than {commit} (wall): {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
