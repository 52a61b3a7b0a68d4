"""``memstore compare`` on inspect eval logs: memstore's paired tests, intervals, gates and exit status,
as for two run folders, and one-line errors for logs of other samples, files that are not logs, and a
machine without inspect-ai."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memstore.cli import main
from tests.inspect.scripted import model_log, run

pytestmark = pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning")

TASK_SUCCESS = "| task_success_rate | memstore_task (this run) | memstore_task (baseline) |"


def _compare(*args: Any) -> Any:
    return CliRunner().invoke(main, ["compare", *map(str, args)])


def _line(text: str, start: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(start))


def test_a_log_that_regressed_fails_paired_by_sample_and_epoch(model_logs: dict[str, Any]) -> None:
    right, wrong = model_logs["right"].location, model_logs["wrong"].location
    result = _compare(right, wrong)
    assert result.exit_code == 1, result.output
    head = f"# memstore compare: 1 run(s) against {right}\n\n## {wrong}\n\n**FAIL**: 1 of 36 gates failed.\n"
    assert result.output.startswith(head)
    assert "Against the first run (paired by task: McNemar, paired bootstrap)" in result.output
    # 12 tasks (4 of 3 samples, 3 epochs), every one right in the first log and wrong in the second:
    # McNemar's exact p = 2 * 0.5**12, Holm-adjusted over the run's 17 comparisons
    line = _line(result.output, TASK_SUCCESS)
    assert line == f"{TASK_SUCCESS} -1.000 [-1.000, -0.657] | 0.0083 | runs | regressed | none |"
    assert "- ✗ memstore_task: task_success_rate not regressed: regressed: 0.000 now vs 1.000" in result.output
    assert "- ? inconclusive: memstore_task: answer_accuracy not regressed: underpowered" in result.output  # 9
    assert "12 tasks, 1 arms, seed 0, 3 trial(s)" in result.output


def test_a_log_that_improved_fails_nothing(model_logs: dict[str, Any]) -> None:
    result = _compare(model_logs["wrong"].location, model_logs["right"].location)
    assert result.exit_code == 3, result.output  # nothing regressed; a few rates cannot rule a regression out
    assert _line(result.output, TASK_SUCCESS).endswith("+1.000 [+0.657, +1.000] | 0.0083 | runs | improved | 0.535 |")


def test_three_logs_each_against_the_first(model_logs: dict[str, Any], tmp_path: Path) -> None:
    right, wrong = model_logs["right"].location, model_logs["wrong"].location
    result = CliRunner().invoke(main, ["compare", right, right, wrong, "--out", str(tmp_path / "c.md")])
    assert result.exit_code == 1, result.output
    text = (tmp_path / "c.md").read_text()
    assert text.startswith(f"# memstore compare: 2 run(s) against {right}")
    assert [line for line in text.splitlines() if line.startswith("## /")] == [f"## {right}", f"## {wrong}"]


def test_logs_of_other_samples_are_refused_unless_forced(model_logs: dict[str, Any], tmp_path: Path) -> None:
    fewer = model_log(tmp_path, right=True, scenarios="jest-to-vitest", epochs=1).location
    right = model_logs["right"].location
    refused = _compare(right, fewer)
    assert refused.exit_code == 2, refused.output
    said = " ".join(refused.output.split())
    assert f"{fewer} and {right} are not logs of the same samples (8 only in {right}: " in said
    assert f"{right}: api-version-moved (epoch 1), api-version-moved (epoch 2)," in said
    assert "Use --force to compare anyway." in said
    forced = _compare(right, fewer, "--force")
    assert forced.exit_code == 3, forced.output  # ran another scenario set, compared all the same on what it shares
    assert _line(forced.output, TASK_SUCCESS).startswith(f"{TASK_SUCCESS} +0.000 [")


def test_a_file_that_is_not_an_inspect_log_is_a_one_line_error(model_logs: dict[str, Any], tmp_path: Path) -> None:
    (tmp_path / "notes.eval").write_text("not a zip file")
    (tmp_path / "other.json").write_text(json.dumps({"eval": {"task": "x"}}))
    for bad in ("notes.eval", "other.json"):
        result = _compare(model_logs["right"].location, tmp_path / bad)
        assert result.exit_code == 2, result.output
        assert f"{tmp_path / bad} is not an inspect eval log (" in " ".join(result.output.split())


def test_a_log_and_a_run_folder_are_not_compared(model_logs: dict[str, Any], tmp_path: Path) -> None:
    result = _compare(model_logs["right"].location, tmp_path)
    assert result.exit_code == 2
    assert "compare inspect eval logs with inspect eval logs, and run folders with run folders" in result.output


def test_without_inspect_ai_it_says_which_extra_to_install(
    model_logs: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # an import of it fails, as where it is not installed
    result = _compare(model_logs["right"].location, model_logs["wrong"].location)
    assert result.exit_code == 2, result.output
    assert "reading inspect eval logs needs inspect-ai: pip install 'agent-memstore[inspect]'" in result.output


def _quiz(right: bool) -> Any:
    """A task of inspect's own, not memstore's: twelve questions, scored by inspect's ``match``."""
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    def answer(messages: list[Any], *args: Any) -> ModelOutput:
        n = int(messages[-1].text.split()[-1])
        made = ModelOutput.from_content("mockllm/model", str(n * n if right else n + 1))
        made.usage = ModelUsage(input_tokens=10, output_tokens=1, total_tokens=11)
        return made

    samples = [Sample(id=f"square-{n}", input=f"What is the square of {n}", target=str(n * n)) for n in range(2, 14)]
    return Task(dataset=samples, solver=generate(), scorer=match(), name="squares"), answer


def test_logs_of_another_task_are_compared_by_their_scores(tmp_path: Path) -> None:
    from inspect_ai.model import get_model

    logs = {}
    for name, right in (("right", True), ("wrong", False)):
        task, answer = _quiz(right)
        logs[name] = run(tmp_path / name, task, get_model("mockllm/model", custom_outputs=answer)).location
    result = _compare(logs["right"], logs["wrong"], "--scorer", "match")
    assert result.exit_code == 1, result.output
    line = _line(result.output, "| task_success_rate | squares (this run) | squares (baseline) |")
    assert "| -1.000 [-1.000, " in line
    assert "| regressed |" in line  # 12 discordant pairs: McNemar's p = 2 * 0.5**12
    missing = _compare(logs["right"], logs["wrong"], "--scorer", "exact")
    assert missing.exit_code == 2, missing.output
    assert f"no sample of {logs['right']} was scored by 'exact'; its scorers: match" in " ".join(missing.output.split())
