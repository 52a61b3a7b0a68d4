"""Walk one run as data: the rooms of the package that `evaluate(config)` and one trial unit pass through.

Run:  python evals/bench/walk.py                       (this checkout; about a minute)
      python evals/bench/walk.py --at 3fb2d4e          (an earlier commit, from a temporary worktree)
      python evals/bench/walk.py --scenario scenarios/jest-to-vitest.yaml --agent no-memory --agent jit-verify

`memstore eval SCENARIO --workers 1` runs in this process (with one worker the units run in it
too) under a profile hook that keeps every call into memstore's own code made while `evaluate`
runs, and while the first trial unit (`run_unit`) runs. Each call is placed in its room: the stage
that holds its module, in the order of docs/design.md's "Rooms" (the core at the bottom, the
command line at the top; a stage's sub-packages count as the stage, so commits with other
layouts compare). For `evaluate` and for the unit it prints:

- calls: calls into memstore's code;
- rooms: the rooms entered;
- stays: visits to a room, a visit ending when a call enters another room (a loop that hands
  each session to its grader and takes it back stays in the two rooms by turns);
- room changes: the calls from one room into another, and the distinct room-to-room edges;
- climbs back: the edges from a room to a higher one, split into *named* (the caller's module
  imports the callee's module or names it in a ``module:attr`` string: a lower stage that knows
  a higher one) and *handed down* (the caller was given the object: the composition root chose it).

The figures are of this machine's run of one scenario; only the counts of rooms and edges are
structure. docs/design.md ("Walked as data") quotes them before and after issue 44.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ORDER = (  # docs/design.md, "Rooms": from the bottom up
    "core", "verify", "transfer", "mcp", "backends", "harness leaves", "records", "scenarios", "world", "run",
    "grading", "analysis", "runfolder", "report", "compose", "sequential", "evaluate", "pytest", "agents",
    "testing", "commands",
)  # fmt: skip
_HARNESS = {
    "stats": "harness leaves",
    "trees": "harness leaves",
    "pytest_run": "pytest",
    "pytest_options": "pytest",
    "pytest_plugin": "pytest",
}
_TOP = {"verify", "transfer", "mcp", "backends", "agents", "testing", "commands", "cli", "__main__"}


def room_of(module: str) -> str:
    """The room of a memstore module (``memstore.harness.run.play.loop`` -> ``run``)."""
    parts = module.split(".")
    if len(parts) > 2 and parts[1] == "harness":
        return _HARNESS.get(parts[2], parts[2])
    if len(parts) > 1 and parts[1] in _TOP:
        return "commands" if parts[1] in ("cli", "__main__") else parts[1]
    return "core"


@dataclass
class Walk:
    """What one stretch of the run did, room by room."""

    calls: int = 0
    rooms: set[str] = field(default_factory=set)
    stays: int = 0
    changes: int = 0
    edges: Counter[tuple[str, str]] = field(default_factory=Counter)
    climbs: Counter[tuple[str, str, str, str]] = field(default_factory=Counter)  # (from, to, caller, callee)
    last: str | None = None

    def add(self, caller: str | None, callee: str) -> None:
        room = room_of(callee)
        self.calls += 1
        self.rooms.add(room)
        if room != self.last:
            self.stays += 1
            self.last = room
        if caller is None or not caller.startswith("memstore"):
            return
        origin = room_of(caller)
        if origin != room:
            self.changes += 1
            self.edges[(origin, room)] += 1
            if ORDER.index(room) > ORDER.index(origin):
                self.climbs[(origin, room, caller, callee)] += 1


_SOURCES: dict[str, str] = {}


def names(caller: str, callee: str) -> bool:
    """Whether ``caller``'s source imports ``callee`` (or a package above it) or names it in a string."""
    if caller not in _SOURCES:
        spec = sys.modules.get(caller)
        path = getattr(spec, "__file__", None)
        _SOURCES[caller] = Path(path).read_text(encoding="utf-8") if path else ""
    named: set[str] = set()
    for node in ast.walk(ast.parse(_SOURCES[caller])):
        if isinstance(node, ast.Import):
            named |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            named |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and re.fullmatch(r"memstore[\w.]*:\w+", node.value)
        ):
            named.add(node.value.partition(":")[0])
    return any(callee == n or callee.startswith(n + ".") for n in named if n.count(".") >= 2)


class Recorder:
    """A profile hook: calls into memstore while ``evaluate`` runs, and while the first unit runs."""

    def __init__(self) -> None:
        self.run, self.unit = Walk(), Walk()
        self.depth = {"evaluate": 0, "run_unit": 0}
        self.units = 0

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event not in ("call", "return"):
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith("memstore"):
            return
        name = frame.f_code.co_name
        if name in self.depth and module.startswith("memstore.harness"):
            if event == "call":
                if name == "run_unit":
                    self.units += 1
                self.depth[name] += 1
            else:
                self.depth[name] -= 1
        if event != "call":
            return
        back = frame.f_back
        caller = back.f_globals.get("__name__") if back is not None else None
        if self.depth["evaluate"] > 0:
            self.run.add(caller, module)
        if self.depth["run_unit"] > 0 and self.units == 1:
            self.unit.add(caller, module)


def show(title: str, walk: Walk) -> None:
    rooms = [r for r in ORDER if r in walk.rooms]
    named: Counter[tuple[str, str]] = Counter()
    handed: Counter[tuple[str, str]] = Counter()
    for (low, high, caller, callee), count in walk.climbs.items():
        (named if names(caller, callee) else handed)[(low, high)] += count
    print(f"{title}: {walk.calls:,} calls into memstore's code")
    print(f"  rooms: {len(rooms)} ({', '.join(rooms)})")
    print(f"  stays: {walk.stays:,}")
    print(f"  room changes: {walk.changes:,} calls over {len(walk.edges)} room-to-room edges")
    print(f"  climbs back: {len(named)} named edges, {len(handed)} handed down")
    for kind, found in (("named", named), ("handed down", handed)):
        for (low, high), count in sorted(found.items(), key=lambda item: ORDER.index(item[0][0])):
            print(f"    {kind:<11} {low} -> {high} ({count:,} calls)")


def walk_here(args: argparse.Namespace, out: Path) -> None:
    from memstore.cli import main

    recorder = Recorder()
    argv = ["eval", *args.scenario, *(a for agent in args.agent for a in ("--agent", agent))]
    argv += ["--workers", "1", "--out", str(out), "--no-fail"]
    with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
        sys.setprofile(recorder)
        try:
            main(argv, standalone_mode=False)
        except SystemExit:
            pass
        finally:
            sys.setprofile(None)
    show("evaluate(config)", recorder.run)
    show("one trial unit (run_unit)", recorder.unit)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--at", help="an earlier commit, walked from a temporary worktree")
    parser.add_argument("--scenario", action="append", help="(default: scenarios/jest-to-vitest.yaml)")
    parser.add_argument("--agent", action="append", help="(default: no-memory and jit-verify)")
    args = parser.parse_args()
    args.scenario = args.scenario or [str(ROOT / "scenarios" / "jest-to-vitest.yaml")]
    args.agent = args.agent or ["no-memory", "jit-verify"]
    with tempfile.TemporaryDirectory(prefix="memstore-walk-") as folder:
        if args.at is None:
            walk_here(args, Path(folder) / "run")
            return 0
        from bench_speed import metadata_of  # this folder's: an earlier commit's own entry points

        tree = Path(folder) / "tree"
        git = ["git", "-C", str(ROOT)]
        subprocess.run([*git, "worktree", "add", "--detach", str(tree), args.at], check=True, capture_output=True)
        try:
            path = os.pathsep.join([str(tree), str(metadata_of(tree, Path(folder) / "metadata"))])
            again = [sys.executable, __file__, *(f"--scenario={s}" for s in args.scenario)]
            again += [f"--agent={a}" for a in args.agent]
            print(f"at {args.at}:", flush=True)
            return subprocess.run(again, cwd=tree, env={**os.environ, "PYTHONPATH": path}, check=False).returncode
        finally:
            subprocess.run([*git, "worktree", "remove", "--force", str(tree)], check=True, capture_output=True)


if __name__ == "__main__":
    raise SystemExit(main())
