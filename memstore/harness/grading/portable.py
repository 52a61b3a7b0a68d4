"""memstore's grading of one session on the standard library alone: the grader of an exported task.

A task exported to run in another harness (a Harbor task: `memstore.harness.export`) is graded
where memstore is not installed, in the verifier's container once the agent's session is over.
This program reads the task's grading data (``expected.json``, written by
`memstore.harness.grading.expected`), the repository the agent worked in and what it reported,
and writes the reward: 1 when the session went right as memstore judges it (its change passes
the merge check; its answer is right; its findings are the expected ones, no more), 0 otherwise.

It is a twin of memstore's own grading, held to it by tests (tests/harness/grading/test_portable.py):
values read and compared as `memstore.harness.scenarios.values` does, answers as
`memstore.harness.grading.answers`, the merge check as `memstore.harness.grading.merge_checks`,
the outcome as `memstore.harness.grading.scoring`. What a change touched is git's own account of
the work tree against the commit the step began at (``--base``), untracked files included. A
scenario's pattern runs under the `regex` package's time limit where it is installed (the
verifier's image installs the version memstore graded with), under `re` otherwise.

    python3 grade.py --expected expected.json --repo /app --outputs DIR --base REF --verifier /logs/verifier
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

try:  # the verifier's image installs it; where it is missing, `re` reads the same patterns without a time limit
    import regex as _regex

    _ERRORS: tuple[type[BaseException], ...] = (TimeoutError, re.error, _regex.error)
except ImportError:  # pragma: no cover - memstore depends on regex
    _regex = None
    _ERRORS = (TimeoutError, re.error)

__all__ = ["answer_is_right", "check_passes", "grade", "main", "normalise", "pattern_group", "values_in"]

PATTERN_TIMEOUT = 2.0  # as `memstore.harness.scenarios.values`
REGEX_TIMEOUT = 1.0  # as `memstore.harness.grading.answers`
CHECK_TIMEOUT = 300.0  # as `memstore.harness.grading.merge_checks`
MAX_READ = 8 * 1024 * 1024  # bytes of a file or an output read at most

_UNITS = {
    "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
    "m": "min", "min": "min", "mins": "min", "minute": "min", "minutes": "min",
    "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
    "d": "d", "day": "d", "days": "d",
    "w": "w", "wk": "w", "week": "w", "weeks": "w",
    "ms": "ms", "millisecond": "ms", "milliseconds": "ms",
}  # fmt: skip
_QUANTITY = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*([a-z]+)?(?![\w.])")
_VERSION = re.compile(r"(?<![\w.])v?(\d+(?:\.\d+){1,3}(?:-[0-9a-z.]+)?)(?![\w])")
_QUOTES = str.maketrans("", "", "\"'`")


def normalise(text: str) -> str:
    """Case folded, quotes and backticks gone, whitespace collapsed, a trailing full stop dropped."""
    return " ".join(text.translate(_QUOTES).casefold().split()).rstrip(".").strip()


def values_in(text: str) -> list[str]:
    """The values a text gives, each in one canonical spelling (``2.1.4`` as ``v2.1.4``, ``30 days`` as ``30d``)."""
    text = normalise(text)
    found = [f"v{m.group(1)}" for m in _VERSION.finditer(text)]
    rest = _VERSION.sub(" ", text)
    for match in _QUANTITY.finditer(rest):
        number, unit = match.group(1), match.group(2) or ""
        number = number.rstrip("0").rstrip(".") if "." in number else number
        found.append(f"{number}{_UNITS.get(unit, '')}")
    return found


def _search(pattern: str, text: str, timeout: float) -> Any:
    """The first match of ``pattern`` in ``text`` (None for none, a bad pattern, or one past its time)."""
    try:
        return _regex.search(pattern, text, timeout=timeout) if _regex is not None else re.search(pattern, text)
    except _ERRORS:
        return None


def pattern_group(pattern: str, text: str | None) -> str | None:
    """Group 1 of ``pattern``'s first match in ``text``, or None."""
    if text is None:
        return None
    found = _search(pattern, text, PATTERN_TIMEOUT)
    return None if found is None else str(found.group(1))


def answer_is_right(answer: str | None, expected: str, match: str = "value") -> bool:
    """Whether ``answer`` answers with ``expected``: the same value in any usual spelling and no
    other of its kind beside it (``value``), the same text (``exact``), the text in it
    (``contains``), or a match of the expected pattern (``regex``)."""
    if answer is None or not answer.strip():
        return False
    if match == "exact":
        return " ".join(answer.split()) == " ".join(expected.split())
    if match == "contains":
        return normalise(expected) in normalise(answer)
    if match == "regex":
        return _search(expected, answer, REGEX_TIMEOUT) is not None
    if normalise(answer) == normalise(expected):
        return True
    wanted, given = values_in(expected), values_in(answer)
    if wanted:
        return set(given) == set(wanted)
    return re.search(rf"(?<![\w-]){re.escape(normalise(expected))}(?![\w-])", normalise(answer)) is not None


def read_text(root: Path, path: str) -> str | None:
    """A file of the work tree below ``root`` as text (None: missing, outside the tree, a link, too big)."""
    target = root / path
    try:
        if target.is_symlink() or not target.resolve().is_relative_to(root.resolve()) or not target.is_file():
            return None
        data = target.read_bytes()[: MAX_READ + 1]
    except (OSError, ValueError):
        return None
    return None if len(data) > MAX_READ else data.decode("utf-8", errors="replace")


def _git(root: Path, *args: str) -> list[str]:
    done = subprocess.run(
        ["git", "-c", "safe.directory=*", "-c", "core.quotePath=false", "-C", str(root), *args],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"git {args[0]} failed: {done.stderr.strip()[:300]}")
    return [line for line in done.stdout.splitlines() if line]


def touched_files(root: Path, base: str) -> set[str]:
    """Every file the work tree changed since ``base``: modified, added, removed (both names of a
    rename), committed or not, and the untracked files git does not ignore."""
    changed = _git(root, "diff", "--no-renames", "--name-only", base, "--")
    return {*changed, *_git(root, "ls-files", "--others", "--exclude-standard")}


def check_passes(root: Path, check: dict[str, Any], touched: set[str]) -> tuple[bool, str]:
    """Whether the work tree passes the merge check, and if not, the first reason."""
    values = [pattern_group(where["pattern"], read_text(root, where["path"])) for where in check.get("equal", [])]
    if any(v is None for v in values):
        return False, "a value the check compares is not there"
    if len(set(values)) > 1:
        return False, f"values that must agree differ: {sorted(set(map(str, values)))}"
    for path, needle in check.get("contains", []):
        text = read_text(root, path)
        if text is None or needle not in text:
            return False, f"{path} does not contain {needle!r}"
    for path, needle in check.get("absent", []):
        text = read_text(root, path)
        if text is not None and needle in text:
            return False, f"{path} still contains {needle!r}"
    changed = sorted(set(check.get("unchanged", [])) & touched)
    if changed:
        return False, f"files that must not change changed: {changed}"
    command = check.get("command") or []
    if command and _command_fails(root, command):
        return False, f"the check command failed: {' '.join(command)}"
    return True, "the change passes its check"


def _command_fails(root: Path, command: list[str]) -> bool:
    argv = [sys.executable if part == "{python}" else part for part in command]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        done = subprocess.run(argv, cwd=root, env=env, capture_output=True, timeout=CHECK_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return True
    return done.returncode != 0


def _findings(outputs: Path, root: str) -> set[str] | None:
    """The files a review reported (``findings.json``: a list of paths or of ``{"path", "note"}``), or None."""
    text = read_text(outputs, "findings.json")
    if text is None:
        return None
    try:
        given = json.loads(text)
    except ValueError:
        return None
    if not isinstance(given, list):
        return None
    paths = [item.get("path") if isinstance(item, dict) else item for item in given]
    prefix = root.rstrip("/") + "/"
    return {p.strip().removeprefix(prefix).removeprefix("./") for p in paths if isinstance(p, str) and p.strip()}


def grade(expected: dict[str, Any], repo: Path, outputs: Path, base: str) -> tuple[float, str]:
    """The session's reward (1.0 or 0.0) and why, as memstore's scoring decides its ``task_success``."""
    surface = expected["surface"]
    if surface == "coding_agent":
        touched = touched_files(repo, base)
        if not touched:
            return 0.0, "the session changed nothing"
        passed, why = check_passes(repo, expected["check"], touched)
        return float(passed), why
    if surface == "code_review":
        reported = _findings(outputs, str(repo))
        if reported is None:
            return 0.0, "no readable findings.json"
        wanted = set(expected["findings"])
        return float(reported == wanted), f"reported {sorted(reported)}, expected {len(wanted)} finding(s)"
    answer = read_text(outputs, "answer.txt")
    where = expected.get("answer_at")
    right = expected["answer"] if where is None else pattern_group(where["pattern"], read_text(repo, where["path"]))
    if right is None:
        return 0.0, "the expected answer could not be read off the repository"
    return float(answer_is_right(answer, right, expected["match"])), f"answered {(answer or '')[:200]!r}"


def main(argv: list[str] | None = None) -> int:
    """Grade one session and write ``reward.txt`` and ``grading.json`` into the verifier's folder."""
    parser = argparse.ArgumentParser(description="Grade one session of an exported memstore task.")
    parser.add_argument("--expected", type=Path, required=True, help="the task's grading data (expected.json)")
    parser.add_argument("--repo", type=Path, required=True, help="the repository the agent worked in")
    parser.add_argument("--outputs", type=Path, required=True, help="the folder of the session's reports")
    parser.add_argument("--base", required=True, help="the commit the session began at")
    parser.add_argument("--verifier", type=Path, required=True, help="where reward.txt is written")
    args = parser.parse_args(argv)
    expected = json.loads(args.expected.read_text(encoding="utf-8"))
    try:
        reward, why = grade(expected, args.repo, args.outputs, args.base)
    except RuntimeError as exc:  # a repository the agent broke: the session did not go right
        reward, why = 0.0, str(exc)
    args.verifier.mkdir(parents=True, exist_ok=True)
    (args.verifier / "reward.txt").write_text(f"{reward:g}\n", encoding="utf-8")
    summary = {"task": expected["task"], "surface": expected["surface"], "reward": reward, "why": why}
    (args.verifier / "grading.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{expected['task']}: reward {reward:g} ({why})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
