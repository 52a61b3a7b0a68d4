"""The adapter contract, version 1: the task the harness writes matches its published schema;
results are validated, unknown versions refused; usage, trajectory and errors are recorded."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from memstore.harness.evaluate import evaluate
from memstore.harness.grading.trial import TrialGrading
from memstore.harness.run.boundary.task_contract import task_schema, validate_result, validate_task
from memstore.harness.run.output import Arm
from memstore.harness.run.runner.pool import RunConfig
from tests.harness.conftest import scenario

AGENT = r"""
import json, os, sys
task = json.load(open(os.environ["MEMSTORE_TASK"]))
print(json.dumps(task))
session = os.environ["MEMSTORE_SESSION_DIR"]
with open(os.path.join(session, "log.jsonl"), "w") as f:
    f.write('{"step": 1, "thought": "read the task"}\n')
result = json.loads(sys.argv[1])
if result.get("trajectory") == "SESSION":
    result["trajectory"] = os.path.join(session, "log.jsonl")
json.dump(result, open(os.environ["MEMSTORE_RESULT"], "w"))
"""


def _run(tmp_path: Path, result: dict[str, object], names: tuple[str, ...] = ("api-version-control",)) -> object:
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    spec = f"command:{sys.executable} {script} '{json.dumps(result)}'"
    config = RunConfig(scenarios=tuple(scenario(n) for n in names), arms=(Arm(spec, "sqlite:"),))
    return evaluate(config, tmp_path / "run")


def _transcripts(tmp_path: Path, found: object) -> list[Path]:
    return [tmp_path / "run" / t for t in found.tables["sessions"].transcript]  # type: ignore[attr-defined]


def test_the_task_file_matches_its_published_schema_on_every_surface(tmp_path: Path) -> None:
    found = _run(
        tmp_path, {"schema_version": 1}, ("api-version-moved", "api-version-review", "api-version-contradicted")
    )
    documents = [json.loads((t / "stdout.txt").read_text()) for t in _transcripts(tmp_path, found)]
    assert {d["task"]["surface"] for d in documents} == {"coding_agent", "code_review", "cli"}
    for document in documents:
        assert validate_task(document) is None
        assert document["schema_version"] == 1
        # in the sandbox the working copy is mounted at /memstore/repo; without it, it is the trial's own
        # folder, removed when the trial ends (so only its shape can be checked afterwards)
        workdir = Path(document["workdir"])
        assert document["workdir"] == "/memstore/repo" or (workdir.is_absolute() and workdir.name == "repo")
        for memory in document["memories"]:
            assert {"snippet", "commit"} <= set(memory["citations"][0])
    assert (
        validate_task({**documents[0], "answer": "x"})
        == "the task: Additional properties are not allowed ('answer' was unexpected)"
    )


def test_a_result_of_another_schema_version_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    assert validate_result({"schema_version": 2}) == "schema_version 2 is not one this harness reads (it reads 1)"
    found = _run(tmp_path, {"schema_version": 2, "answer": "x"})
    events = found.tables["events"]  # type: ignore[attr-defined]
    assert list(events[events.kind == "agent_error"].detail) == [
        "result.json does not match the schema: schema_version 2 is not one this harness reads (it reads 1)"
    ]


def test_usage_and_the_trajectory_are_kept_and_summed(tmp_path: Path) -> None:
    usage = {"input_tokens": 1200, "output_tokens": 300, "cache_tokens": 1000, "cost_usd": 0.0125, "model": "m-1"}
    found = _run(tmp_path, {"schema_version": 1, "usage": usage, "trajectory": "SESSION"}, ("api-version-moved",))
    sessions = found.tables["sessions"]  # type: ignore[attr-defined]
    count = len(sessions)
    overall = next(iter(found.results.arms.values())).overall  # type: ignore[attr-defined]
    assert overall["input_tokens"] == 1200 * count
    assert overall["output_tokens"] == 300 * count
    assert overall["cache_tokens"] == 1000 * count
    assert overall["cost_usd"] == pytest.approx(0.0125 * count)
    assert set(sessions.model) == {"m-1"}
    for folder in _transcripts(tmp_path, found):
        assert (folder / "trajectory.jsonl").read_text() == '{"step": 1, "thought": "read the task"}\n'
        meta = json.loads((folder / "session.json").read_text())
        assert meta["exit_status"] == 0
        assert meta["trajectory"] == "trajectory.jsonl"
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert next(iter(results["arms"].values()))["overall"]["input_tokens"] == 1200 * count


def test_an_infrastructure_error_is_a_session_not_run_not_a_failed_task(tmp_path: Path) -> None:
    error = {"kind": "infrastructure", "message": "the model endpoint answered 503"}
    found = _run(tmp_path, {"schema_version": 1, "error": error})
    sessions = found.tables["sessions"]  # type: ignore[attr-defined]
    assert sessions.infra_error.all()
    assert sessions.task_success.isna().all()
    overall = next(iter(found.results.arms.values())).overall  # type: ignore[attr-defined]
    assert (overall["infra_error_rate"].k, overall["infra_error_rate"].n) == (len(sessions), len(sessions))
    assert overall.get("task_success_rate") is None  # nothing ran: no rate, not a rate of 0


def test_the_published_schemas_are_in_the_package() -> None:
    assert task_schema()["$id"] == "urn:memstore:agent-task:1"
    assert "usage" in json.loads((Path(sys.modules["memstore"].__file__).parent / "harness" / "schemas" /
                                  "agent-result.schema.json").read_text())["properties"]  # fmt: skip


def test_the_report_links_each_session_to_its_transcript(tmp_path: Path) -> None:
    usage = {"input_tokens": 10, "output_tokens": 5, "cost_usd": 0.5}
    found = _run(tmp_path, {"schema_version": 1, "usage": usage})
    transcript = found.tables["sessions"].transcript.iloc[0]  # type: ignore[attr-defined]
    html = (tmp_path / "run" / "report.html").read_text()
    assert f'href="{transcript}/stdout.txt"' in html
    assert (tmp_path / "run" / transcript / "stdout.txt").is_file()
    markdown = (tmp_path / "run" / "report.md").read_text()
    assert "| tokens in / out | cost $ | $ / merge |" in markdown
    assert "| 10 / 5 | 0.5 |" in markdown


def test_max_cost_stops_new_units_once_spent(tmp_path: Path) -> None:
    from memstore.harness.run.runner.pool import run

    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    result = {"schema_version": 1, "usage": {"cost_usd": 1.0}}
    spec = f"command:{sys.executable} {script} '{json.dumps(result)}'"
    names = ("api-version-control", "api-version-moved", "api-docs-deleted")
    config = RunConfig(scenarios=tuple(scenario(n) for n in names), arms=(Arm(spec, "sqlite:"),), max_cost=1.0)
    output = run(config, grading=TrialGrading)
    assert len({s.scenario for s in output.sessions}) == 1  # the first unit spent the budget
    assert [f.error for f in output.failures] == ["not run: --max-cost reached ($1.00 spent)"] * 2
    unbounded = run(RunConfig(scenarios=config.scenarios, arms=config.arms), grading=TrialGrading)
    assert unbounded.failures == []
