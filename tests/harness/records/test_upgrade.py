"""Results of the previous formats load through `upgrade`: real run folders written in format 1
(the determinism sample as memstore committed it before formats were recorded, at f3dd331) and
in format 2 (the same sample as committed at 1e2fa6c, one stubs' budget for the whole run; its
empty failures table, which the committed sample leaves out, from a run of that commit)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from memstore.cli import main
from memstore.errors import ConfigurationError
from memstore.harness.analysis.run_results import RunResults
from memstore.harness.records import FORMAT, Role, format_of, upgrade, upgrade_tables
from memstore.harness.run.output import RunOutput
from memstore.harness.run.runner.pool import Arm, RunConfig, units
from memstore.harness.runfolder.results import load_baseline, load_results, load_tables
from memstore.harness.runfolder.shards import ENGINE, write_shard
from memstore.harness.scenarios.data import scenarios_dir
from memstore.harness.scenarios.loader import load_file

FORMAT_1 = Path(__file__).resolve().parents[2] / "fixtures" / "format-1"
FORMAT_2 = FORMAT_1.with_name("format-2")


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "run"
    shutil.copytree(FORMAT_1, folder)
    return folder


def test_a_format_1_results_file_loads_with_its_figures_as_written() -> None:
    written = json.loads((FORMAT_1 / "results.json").read_text())
    assert "format" not in written
    results = load_results(FORMAT_1)
    assert set(results.arms) == set(written["arms"])
    for name, arm in results.arms.items():
        assert arm.role.value == written["arms"][name]["role"]
        assert arm.to_json()["overall"] == written["arms"][name]["overall"]
    assert results.to_json()["format"] == FORMAT == 4


def test_a_format_1_run_folder_gets_the_tables_it_lacked() -> None:
    tables = load_tables(FORMAT_1)
    assert not (FORMAT_1 / "failures.csv.gz").exists()
    assert tables["failures"].empty
    assert set(tables["sessions"].role) == {"control", "harm-probe", "treatment"}


def test_roles_that_format_1_did_not_record_are_given_as_its_agents_declared_them(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    data = json.loads((folder / "results.json").read_text())
    for arm in data["arms"].values():
        del arm["role"]
    (folder / "results.json").write_text(json.dumps(data))
    sessions = pd.read_csv(folder / "sessions.csv.gz").drop(columns="role")
    sessions.to_csv(folder / "sessions.csv.gz", index=False, compression={"method": "gzip", "mtime": 0})
    results = load_results(folder)
    roles = {name: arm.role for name, arm in results.arms.items()}
    assert roles == {
        "blind-trusting/sqlite": Role.TREATMENT,
        "jit-verify/sqlite": Role.TREATMENT,
        "no-memory/sqlite": Role.CONTROL,
        "trusting/sqlite": Role.HARM_PROBE,
    }
    by_arm = load_tables(folder)["sessions"].drop_duplicates("arm").set_index("arm").role.to_dict()
    assert by_arm["no-memory/sqlite"] == "control"
    assert by_arm["trusting/sqlite"] == "harm-probe"
    assert load_baseline(folder).sessions is not None
    assert set(load_baseline(folder).sessions.role) == {"control", "harm-probe", "treatment"}  # type: ignore[union-attr]


def test_the_current_format_round_trips_unchanged() -> None:
    results = load_results(FORMAT_1)
    document = results.to_json()
    assert upgrade(document) == document
    assert RunResults.from_json(upgrade(document)) == results
    assert upgrade_tables({"sessions": pd.DataFrame({"arm": ["a"]})}, FORMAT)["sessions"].columns.tolist() == ["arm"]


def test_a_format_3_folder_pairs_its_memories_by_the_ids_it_wrote() -> None:
    """Before format 4 a seeded memory was paired across arms by its id: an older folder's labelled
    memories keep their ids as their seeds (a memory with no label has none), so they pair as they did."""
    events = pd.DataFrame({"memory_id": ["mem_1", "mem_2", ""], "truth": ["valid", "", ""]})
    trials = pd.DataFrame({"bad_ids": ["mem_1;mem_3"], "healed_ids": ["mem_3"]})
    upgraded = upgrade_tables({"events": events, "trials": trials}, 3)
    assert upgraded["events"].seed.tolist() == ["mem_1", "", ""]
    assert upgraded["trials"][["bad_seeds", "healed_seeds"]].values.tolist() == [["mem_1;mem_3", "mem_3"]]
    assert upgrade_tables({"events": events.iloc[:0]}, 3)["events"].columns.tolist() == ["memory_id", "truth", "seed"]


def test_a_format_2_run_gives_its_one_budget_to_each_simulated_arm() -> None:
    written = json.loads((FORMAT_2 / "results.json").read_text())
    assert written["format"] == 2
    assert written["run"]["agent_config"] == {"learn": True, "reads": 8, "searches": 2}
    results = load_results(FORMAT_2)
    run = results.to_json()["run"]
    assert "agent_config" not in run
    assert [(a["name"], a["params"]) for a in run["arms"]] == [
        (name, {"learn": True, "reads": 8, "searches": 2})
        for name in ("no-memory/sqlite", "trusting/sqlite", "blind-trusting/sqlite", "jit-verify/sqlite")
    ]
    for name, arm in results.arms.items():
        assert arm.to_json()["overall"] == written["arms"][name]["overall"]
    document = dict(written)
    document["run"] = {**written["run"], "arms": [{**written["run"]["arms"][0], "simulated": False}]}
    assert upgrade(document)["run"]["arms"][0]["params"] == {}  # a real agent's arm had no budget


def test_memstore_report_renders_a_format_2_run_folder_with_its_budget(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    shutil.copytree(FORMAT_2, folder)
    result = CliRunner().invoke(main, ["report", str(folder), "--format", "md"])
    assert result.exit_code == 0, result.output
    assert "exploration budget (learn=True, reads=8, searches=2)" in (folder / "report.md").read_text()


@pytest.mark.parametrize("version", [5, 0, "2", True, None])
def test_a_format_this_memstore_does_not_know_is_refused(tmp_path: Path, version: object) -> None:
    with pytest.raises(ConfigurationError, match="this memstore reads formats 1 to 4"):
        format_of({"format": version})
    folder = _copy(tmp_path)
    data = json.loads((folder / "results.json").read_text())
    (folder / "results.json").write_text(json.dumps({**data, "format": version}))
    with pytest.raises(ConfigurationError, match=r"results\.json: written in format"):
        load_results(folder)


def test_memstore_report_renders_a_format_1_run_folder(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    result = CliRunner().invoke(main, ["report", str(folder), "--format", "md"])
    assert result.exit_code == 0, result.output
    text = (folder / "report.md").read_text()
    assert text.startswith("# memstore eval\n\n**UNDECIDED**: none of 79 gates failed; 2 inconclusive")
    assert "jit-verify" in text


def test_a_shard_records_its_format(tmp_path: Path) -> None:
    config = RunConfig(tuple(load_file(scenarios_dir() / "api-version-moved.yaml")), (Arm("no-memory"),))
    path = write_shard(tmp_path, units(config)[0], RunOutput())
    data = json.loads(gzip.decompress(path.read_bytes()))
    assert (data["format"], data["engine"]) == (FORMAT, ENGINE)
    assert ENGINE.endswith(f"/shards-{FORMAT}")
