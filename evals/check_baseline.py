"""Hold a fresh run to a committed baseline, byte for byte: ``python evals/check_baseline.py RUN [BASELINE]``.

``.ci/run`` runs the default library (``memstore eval --baseline reports/baseline --out RUN``)
and then this: the run's ``results.json`` and ``sessions.csv.gz`` must be the baseline's bytes
(default ``reports/baseline``), since the same commit and seed write the same bytes from any
checkout. A difference is named with its file and where it starts (the first differing field of
the results, the first differing row of the sessions), and the way to regenerate the baseline
when the change is meant (reports/README.md). Exit 0 when both files are the same, 1 when one
differs, 2 when a file is missing.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

FILES = ("results.json", "sessions.csv.gz")
REGENERATE = {
    "reports/baseline": (
        "memstore eval --out /tmp/run && cp /tmp/run/results.json /tmp/run/sessions.csv.gz reports/baseline/"
    ),
    "reports/sample-baseline": (
        "memstore eval --quick --out /tmp/sample && "
        "cp /tmp/sample/results.json /tmp/sample/sessions.csv.gz reports/sample-baseline/"
    ),
}


def _short(value: object, width: int = 100) -> str:
    text = json.dumps(value, sort_keys=True) if not isinstance(value, str) else repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def first_difference(then: Any, now: Any, where: str = "(top)") -> str | None:
    """Where two JSON values first differ (``arms[2].rates.merge_rate``) and the two values there."""
    if type(then) is not type(now):
        return f"{where}: {_short(then)} in the baseline, {_short(now)} in the run"
    if isinstance(then, dict):
        for key in sorted(set(then) | set(now)):
            at = key if where == "(top)" else f"{where}.{key}"
            if key not in now or key not in then:
                return f"{at}: missing from {'the run' if key not in now else 'the baseline'}"
            found = first_difference(then[key], now[key], at)
            if found:
                return found
        return None
    if isinstance(then, list):
        for index, (a, b) in enumerate(zip(then, now, strict=False)):
            found = first_difference(a, b, f"{where}[{index}]")
            if found:
                return found
        if len(then) != len(now):
            return f"{where}: {len(then)} items in the baseline, {len(now)} in the run"
        return None
    if then != now:
        return f"{where}: {_short(then)} in the baseline, {_short(now)} in the run"
    return None


def _first_row(then: bytes, now: bytes) -> str:
    """The first row where two gzipped tables differ."""
    old, new = gzip.decompress(then).decode().splitlines(), gzip.decompress(now).decode().splitlines()
    for number, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        if a != b:
            return f"line {number}: {_short(a)} in the baseline, {_short(b)} in the run"
    if len(old) != len(new):
        return f"{len(old)} lines in the baseline, {len(new)} in the run"
    return "the same rows, compressed differently"


def explain(name: str, then: bytes, now: bytes) -> str:
    """Where ``name``'s two versions first differ, in words."""
    try:
        if name.endswith(".json"):
            return first_difference(json.loads(then), json.loads(now)) or "the same values, written differently"
        return _first_row(then, now)
    except (ValueError, OSError, EOFError) as exc:  # not JSON, not gzip: the bytes differ, that is all
        return f"cannot be read to say where ({exc})"


def check(run: Path, baseline: Path) -> list[str]:
    """What differs between ``run`` and ``baseline`` (an empty list when nothing does)."""
    problems = []
    for name in FILES:
        fresh, kept = run / name, baseline / name
        missing = [str(p) for p in (fresh, kept) if not p.is_file()]
        if missing:
            problems.append(f"{name}: missing: {', '.join(missing)}")
            continue
        then, now = kept.read_bytes(), fresh.read_bytes()
        if then != now:
            problems.append(f"{name} differs from {kept}: {explain(name, then, now)}")
    return problems


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2):
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    run, baseline = Path(argv[0]), Path(argv[1] if len(argv) == 2 else "reports/baseline")
    problems = check(run, baseline)
    if not problems:
        print(f"{run}: {' and '.join(FILES)} are the bytes of {baseline}")
        return 0
    for problem in problems:
        print(problem, file=sys.stderr)
    fallback = f"copy {' and '.join(FILES)} of a fresh run into {baseline}"
    again = REGENERATE.get(baseline.as_posix().rstrip("/"), fallback)
    print(
        f"The run wrote other bytes than the committed baseline. If the change is meant, regenerate "
        f"{baseline} (reports/README.md): {again}",
        file=sys.stderr,
    )
    return 2 if any(": missing: " in p for p in problems) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
