"""Reports of a run: Markdown, JUnit, gates; and the HTML page loaded in headless Chromium."""

from __future__ import annotations

import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from memstore.harness.analysis.compare import compare_runs
from memstore.harness.analysis.results import write_run
from memstore.harness.report import gates, render_junit, render_markdown, write_reports
from memstore.harness.run.runner import Arm, RunConfig, run
from tests.harness.conftest import scenario


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    config = RunConfig(
        scenarios=tuple(scenario(n) for n in ("adversarial-memories", "api-version-review", "cross-agent-logging")),
        arms=tuple(Arm(a, "memory://") for a in ("no-memory", "trusting", "jit-verify")),
        trials=2,
    )
    folder = tmp_path_factory.mktemp("run")
    results, tables = write_run(folder, config, run(config), seconds=1.0)
    write_reports(folder, results, tables, gates(results), ("html", "md", "junit", "json"))
    return folder, results, tables


def test_every_report_is_written(run_folder: tuple[Path, dict[str, Any], dict[str, Any]]) -> None:
    folder, _, _ = run_folder
    for name in ("report.html", "report.md", "junit.xml", "report.json", "results.json"):
        assert (folder / name).stat().st_size > 0, name


def test_markdown_summary(run_folder: tuple[Path, dict[str, Any], dict[str, Any]]) -> None:
    _, results, _ = run_folder
    text = render_markdown(results, gates(results))
    assert text.startswith("# memstore eval\n\n12 tasks, 3 arms, seed 0, 2 trial(s)")
    assert "| jit-verify/memory | " in text
    assert "## Paired comparisons" in text
    assert "## Harm and rescue against the no-memory control" in text
    assert "| trusting/memory | all | " in text
    assert "## What is simulated" in text
    assert "no-memory, trusting, jit-verify are built-in stub agents" in text
    assert "(searches=2, reads=8, learn=True)" in text
    # per arm: 3 integrity gates, leaks, expiry; and jit-verify not worse than no-memory
    assert "16 of 16 passed." in text


def test_junit_has_one_case_per_gate(run_folder: tuple[Path, dict[str, Any], dict[str, Any]]) -> None:
    _, results, _ = run_folder
    gate_list = gates(results)
    suite = ET.fromstring(render_junit(gate_list))
    assert suite.attrib == {"name": "memstore", "tests": "16", "failures": "0", "errors": "0"}
    assert [case.attrib["name"] for case in suite][:5] == [
        "jit-verify/memory: the agent did not fail every session",
        "jit-verify/memory: every unit ran",
        "jit-verify/memory: tampering == 0",
        "jit-verify/memory: leaks == 0",
        "jit-verify/memory: expiry_violations == 0",
    ]


def test_a_significant_regression_fails_its_gate(run_folder: tuple[Path, dict[str, Any], dict[str, Any]]) -> None:
    _, results, _ = run_folder
    worse = {
        **results,
        "arms": {arm: {**data, "overall": {**data["overall"]}} for arm, data in results["arms"].items()},
    }
    worse["arms"]["jit-verify/memory"]["overall"]["detection_recall"] = {"value": 0.0, "k": 0, "n": 300}
    better = {
        **results,
        "arms": {arm: {**data, "overall": {**data["overall"]}} for arm, data in results["arms"].items()},
    }
    better["arms"]["jit-verify/memory"]["overall"]["detection_recall"] = {"value": 1.0, "k": 300, "n": 300}
    failed = [g for g in gates(worse, [c.to_dict() for c in compare_runs(worse, better)]) if not g.passed]
    assert [g.name for g in failed] == ["jit-verify/memory: detection_recall not regressed"]
    assert failed[0].message.startswith("regressed: 0.000 now vs 1.000 in the baseline")
    suite = ET.fromstring(render_junit(gates(worse, [c.to_dict() for c in compare_runs(worse, better)])))
    assert suite.attrib["failures"] == "1"


def test_an_invariant_broken_fails_its_gate(run_folder: tuple[Path, dict[str, Any], dict[str, Any]]) -> None:
    _, results, _ = run_folder
    leaky = {
        **results,
        "arms": {arm: {**data, "overall": {**data["overall"]}} for arm, data in results["arms"].items()},
    }
    leaky["arms"]["trusting/memory"]["overall"]["leaks"] = 3
    failed = [g for g in gates(leaky) if not g.passed]
    assert [(g.name, g.message) for g in failed] == [("trusting/memory: leaks == 0", "3 leaks")]


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def test_html_report_loads_in_headless_chromium(
    run_folder: tuple[Path, dict[str, Any], dict[str, Any]], tmp_path: Path
) -> None:
    browser = _chromium()
    if browser is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium is not installed: .ci/run installs Debian's chromium package")
        pytest.skip("Chromium is not installed here (CI installs it)")
    folder, _, _ = run_folder
    page = folder / "report.html"
    html = page.read_text()
    for external in ('src="http', "src='http", 'href="http', "<link ", "@import", "url(http"):
        assert external not in html  # self-contained: nothing is fetched
    done = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    errors = [
        line for line in done.stderr.splitlines() if "CONSOLE" in line and ("Uncaught" in line or "Error" in line)
    ]
    assert errors == []
    assert 'data-charts="4"' in dom  # every chart is there
    assert 'data-ready="1"' in dom  # and the page's script ran to the end
    for chart in ("rates", "forest", "confusion", "healing"):
        assert f'data-chart="{chart}"' in dom


def _comparison(metric: str, a: str, b: str, verdict: str, a_value: float, b_value: float) -> dict[str, Any]:
    return {
        "metric": metric,
        "a": a,
        "b": b,
        "verdict": verdict,
        "a_value": a_value,
        "b_value": b_value,
        "p_adjusted": 0.001 if verdict in {"improved", "regressed"} else 0.4,
    }


ARMS = {
    "no-memory/sqlite": {"agent": "no-memory", "store": "sqlite", "overall": {}},
    "trusting/sqlite": {"agent": "trusting", "store": "sqlite", "overall": {}},
    "jit-verify/sqlite": {"agent": "jit-verify", "store": "sqlite", "overall": {}},
}


def test_the_no_harm_gate_fails_when_jit_verify_is_significantly_worse() -> None:
    from memstore.harness.report import no_harm_gates

    fine = {
        "arms": ARMS,
        "comparisons": [
            _comparison("merge_rate", "jit-verify/sqlite", "no-memory/sqlite", "improved", 0.9, 0.8),
            _comparison("answer_accuracy", "jit-verify/sqlite", "no-memory/sqlite", "no significant change", 0.9, 0.9),
        ],
    }
    worse = {
        "arms": ARMS,
        "comparisons": [
            *fine["comparisons"],
            _comparison("review_precision", "jit-verify/sqlite", "no-memory/sqlite", "regressed", 0.7, 0.95),
        ],
    }
    (passed,) = no_harm_gates(fine)
    assert passed.passed
    assert passed.name == "jit-verify/sqlite: not significantly worse than no-memory"
    (failed,) = no_harm_gates(worse)
    assert not failed.passed
    assert failed.message == "review_precision 0.700 vs 0.950 (p = 0.001)"
    (unmeasured,) = no_harm_gates({"arms": ARMS, "comparisons": []})
    assert not unmeasured.passed  # a gate with nothing compared does not pass by default
    assert [g.name for g in gates({"arms": ARMS, "comparisons": worse["comparisons"]}) if not g.passed] == [
        "jit-verify/sqlite: not significantly worse than no-memory"
    ]


def test_the_harm_seen_gate_fails_when_trusting_is_not_measurably_harmed() -> None:
    from memstore.harness.report import harm_seen_gate

    harmed = {
        "arms": ARMS,
        "comparisons": [
            _comparison("merge_rate", "trusting/sqlite", "no-memory/sqlite", "regressed", 0.4, 0.8),
        ],
    }
    unharmed = {
        "arms": ARMS,
        "comparisons": [
            _comparison("merge_rate", "trusting/sqlite", "no-memory/sqlite", "underpowered", 0.78, 0.8),
            _comparison("stale_use_rate", "trusting/sqlite", "no-memory/sqlite", "regressed", 0.3, 0.0),
        ],
    }
    assert harm_seen_gate(harmed).passed
    gate = harm_seen_gate(unharmed)
    assert not gate.passed  # stale use alone is not harm to an outcome
    assert gate.message == "merge_rate 0.780 vs 0.800 (underpowered, p = 0.4)"
    assert not harm_seen_gate({"arms": ARMS, "comparisons": []}).passed


def test_the_verifier_gates_fail_below_their_bars() -> None:
    from memstore.harness.report import verifier_gates

    good = {
        "detection_recall": {"value": 0.97, "k": 97, "n": 100},
        "false_invalidation_rate": {"value": 0.01, "k": 1, "n": 100},
        "reanchor_accuracy": {"value": 0.95, "k": 19, "n": 20},
    }
    assert all(g.passed for g in verifier_gates(good, "jit-verify/sqlite"))
    bad = {**good, "detection_recall": {"value": 0.9, "k": 90, "n": 100}, "reanchor_accuracy": None}
    failed = [(g.name, g.message) for g in verifier_gates(bad, "jit-verify/sqlite") if not g.passed]
    assert failed == [
        ("jit-verify/sqlite: detection_recall >= 0.95", "0.900 (bar >= 0.95)"),
        ("jit-verify/sqlite: reanchor_accuracy >= 0.9", "not measured (bar >= 0.9)"),
    ]
