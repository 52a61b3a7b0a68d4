"""Later runs against the first (``memstore compare``): each compared with it arm by arm, task by
task where both kept their sessions, gated as a baseline is, and told in Markdown. The runs are run
folders (`compare_folders`), or anything read as runs to compare (`compare_baselines`: inspect eval
logs, `memstore.inspect`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memstore.harness.analysis import RunResults, compare_runs
from memstore.harness.report.builtin_gates import Gate, gates
from memstore.harness.report.gate import Decision, decide
from memstore.harness.report.markdown import render_markdown
from memstore.harness.runfolder import Baseline, check_same_scenarios, load_baseline

__all__ = ["Compared", "compare_baselines", "compare_folders"]


@dataclass(frozen=True)
class Compared:
    """Runs compared with the first: the comparison in Markdown, and every gate of the later runs."""

    text: str
    gates: list[Gate]

    @property
    def decision(self) -> Decision:
        """FAIL when a gate of a later run failed; PASS when all passed; UNDECIDED otherwise."""
        return decide(self.gates)


def compare_folders(runs: Sequence[Path], *, force: bool = False) -> Compared:
    """Each of ``runs[1:]`` (run folders or ``results.json`` files) against ``runs[0]``.

    Raises:
        ConfigurationError: a run that cannot be read, or of another scenario set (unless ``force``).
    """
    return compare_baselines([load_baseline(run) for run in runs], force=force)


def compare_baselines(runs: Sequence[Baseline], *, force: bool = False) -> Compared:
    """Each of ``runs[1:]`` against ``runs[0]``, each run named by where it was read from.

    Raises:
        ConfigurationError: a run of another scenario set (unless ``force``).
    """
    first = runs[0]
    lines = [f"# memstore compare: {len(runs) - 1} run(s) against {first.source}", ""]
    every: list[Gate] = []
    for current in runs[1:]:
        check_same_scenarios(current.results.run, first.results.run, force=force, what=str(first.source))
        found = compare_runs(
            current.results, first.results, current_sessions=current.sessions, baseline_sessions=first.sessions
        )
        gate_list = gates(current.results, found)
        every += gate_list
        against = RunResults(current.results.run, current.results.arms, tuple(found))
        how = "paired by task: McNemar, paired bootstrap" if current.paired and first.paired else "unpaired"
        summary = render_markdown(against, gate_list, comparisons_title=f"Against the first run ({how})")
        lines += [f"## {current.source}", "", *summary.splitlines()[2:], ""]  # the verdict first, as in report.md
    return Compared("\n".join(lines), every)
