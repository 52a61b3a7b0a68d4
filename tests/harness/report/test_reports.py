"""Reports of a run: Markdown, JUnit, gates; and the HTML page loaded in headless Chromium."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from memstore.harness.analysis.compare import Comparison, ComparisonVerdict, compare_runs
from memstore.harness.analysis.run_results import ArmResult, Rate, Role, RunResults
from memstore.harness.evaluate import Evaluation, evaluate
from memstore.harness.records import RunMeta
from memstore.harness.report import gates, render_junit, render_markdown, write_reports
from memstore.harness.report.charts import forest_chart
from memstore.harness.report.gate import Outcome
from memstore.harness.run.runner.pool import Arm, RunConfig
from tests.harness.conftest import scenario

Folder = tuple[Path, RunResults, dict[str, Any]]


@pytest.fixture(scope="module")
def evaluation(tmp_path_factory: pytest.TempPathFactory) -> Evaluation:
    config = RunConfig(
        scenarios=tuple(scenario(n) for n in ("adversarial-memories", "api-version-review", "cross-agent-logging")),
        arms=tuple(Arm(a, "memory://") for a in ("no-memory", "trusting", "jit-verify")),
        trials=2,
    )
    found = evaluate(config, tmp_path_factory.mktemp("run"))
    write_reports(found.folder, found.results, found.tables, found.gates, ("html", "md", "junit", "json"))
    return found


@pytest.fixture(scope="module")
def run_folder(evaluation: Evaluation) -> Folder:
    return evaluation.folder, evaluation.results, evaluation.tables


def _with(results: RunResults, arm: str, **overall: object) -> RunResults:
    """``results`` with some of ``arm``'s overall metrics replaced."""
    changed = replace(results.arms[arm], overall={**results.arms[arm].overall, **overall})
    return replace(results, arms={**results.arms, arm: changed})


def test_every_report_is_written(run_folder: Folder) -> None:
    folder, _, _ = run_folder
    for name in ("report.html", "report.md", "junit.xml", "report.json", "results.json", "sessions.csv.gz"):
        assert (folder / name).stat().st_size > 0, name


def test_a_report_rendered_again_from_results_json_is_the_report_the_run_wrote(run_folder: Folder) -> None:
    """results.json keeps its keys sorted; nothing in the report may depend on the order a live run had."""
    from memstore.harness.runfolder.results import load_results, load_tables

    folder, _, _ = run_folder
    sessions = load_tables(folder)["sessions"]
    again = render_markdown(load_results(folder), gates(load_results(folder)), sessions=sessions)
    written = (folder / "report.md").read_text(encoding="utf-8")
    assert again.split("## Retrieval and cost")[0] == written.split("## Retrieval and cost")[0]


def test_markdown_summary(run_folder: Folder) -> None:
    _, results, _ = run_folder
    text = render_markdown(results, gates(results))
    # three scenarios cannot decide every gate: the decision says so first, then why and what to run
    assert text.startswith(
        "# memstore eval\n\n**UNDECIDED**: none of 62 gates failed; 4 inconclusive, 13 not exercised"
    )
    assert (
        "- ? not exercised: contract[expired_returned] on 3 arms (jit-verify/memory, no-memory/memory, "
        "trusting/memory): no session gave the store a chance to break it; needs a scenario with a memory that expired"
    ) in text
    assert "about 67 tasks (12 now) would decide it" in text
    assert "Next: run about 1,152 tasks (12 now)" in text
    assert "Probes: trusting/memory: a probe, expected to regress" in text
    assert "12 tasks, 3 arms, seed 0, 2 trial(s)" in text
    assert "- trusting/memory: task success " in text  # the headline, before the table
    assert text.index("- jit-verify/memory: task success") < text.index("| arm |")
    assert "| no-memory/memory (control) | " in text
    assert "## Paired comparisons" in text
    assert "## Harm and rescue against the control" in text
    assert "| trusting/memory | all | " in text
    assert "## What is simulated" in text
    assert "no-memory, trusting, jit-verify are built-in stub agents" in text
    assert "(learn=True, reads=8, searches=2)" in text
    # per arm: 4 integrity gates and 15 promises of the store contract; the treatment arm not
    # worse than the control, the probe harmed, the verifier's three bars
    assert "45 of 62 passed." in text
    assert "| jit-verify/memory: not significantly worse than the control | inconclusive |" in text
    assert "gate(s) failed" not in text


def test_junit_has_one_case_per_gate(run_folder: Folder) -> None:
    _, results, _ = run_folder
    suite = ET.fromstring(render_junit(gates(results)))
    assert suite.attrib == {"name": "memstore", "tests": "62", "failures": "0", "errors": "0", "skipped": "17"}
    assert [case.attrib["name"] for case in suite][:6] == [
        "jit-verify/memory: sessions without an agent error > 0",
        "jit-verify/memory: sessions without an infrastructure error > 0",
        "jit-verify/memory: every unit ran",
        "jit-verify/memory: tampering == 0",
        "jit-verify/memory: recent() returns every live memory the user may see, up to the limit (forgotten == 0)",
        "jit-verify/memory: a write the store acknowledged is kept (unkept_writes == 0)",
    ]
    names = [case.attrib["name"] for case in suite]
    assert names[-5:] == [
        "jit-verify/memory: not significantly worse than the control",
        "trusting/memory: bad memory measurably harms it (a probe: expected to regress)",
        "jit-verify/memory: detection_recall >= 0.95",
        "jit-verify/memory: false_invalidation_rate <= 0.02",
        "jit-verify/memory: reanchor_accuracy >= 0.8",
    ]
    skipped = suite[names.index("jit-verify/memory: false_invalidation_rate <= 0.02")].find("skipped")
    assert skipped is not None
    assert skipped.attrib["message"].startswith("inconclusive: 0.000 (0/6) [0.000, 0.393] (bar <= 0.02)")


def test_results_json_round_trips(run_folder: Folder) -> None:
    folder, results, _ = run_folder
    from memstore.harness.runfolder.results import load_results

    again = load_results(folder)
    assert again.arms == results.arms
    assert again.to_json() == json.loads((folder / "results.json").read_text())  # comparisons kept to 6 digits
    assert again.arms["no-memory/memory"].role is Role.CONTROL
    assert again.arms["trusting/memory"].role is Role.HARM_PROBE


def test_a_significant_regression_fails_its_gate(run_folder: Folder) -> None:
    _, results, _ = run_folder
    worse = _with(results, "jit-verify/memory", detection_recall=Rate(0, 300))
    better = _with(results, "jit-verify/memory", detection_recall=Rate(300, 300))
    failed = [g for g in gates(worse, compare_runs(worse, better)) if g.failed]
    assert [g.name for g in failed] == [
        "jit-verify/memory: detection_recall >= 0.95",  # the verifier's own bar
        "jit-verify/memory: detection_recall not regressed",
    ]
    assert failed[1].message.startswith("regressed: 0.000 now vs 1.000 in the baseline")
    suite = ET.fromstring(render_junit(gates(worse, compare_runs(worse, better))))
    assert suite.attrib["failures"] == "2"


def test_an_invariant_broken_fails_its_gate_and_tops_the_report(run_folder: Folder) -> None:
    _, results, _ = run_folder
    leaky = _with(results, "trusting/memory", scope_leaks=3)
    failed = [g for g in gates(leaky) if g.failed]
    assert [(g.name, g.message) for g in failed] == [(f"trusting/memory: {_SCOPE}", "3 breaches")]
    text = render_markdown(leaky, gates(leaky))
    assert text.splitlines()[2].startswith("**FAIL**: 1 of ")
    assert text.index(f"- \u2717 trusting/memory: {_SCOPE}: 3 breaches") < text.index("| arm |")
    assert "**UNDECIDED**: none of " in render_markdown(results, gates(results)).splitlines()[2]


_SCOPE = "a repository's facts reach only users who may read that repository (scope_leaks == 0)"


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def _dump_dom(page: Path, profile: Path) -> str:
    """The page as headless Chromium rendered it, after its script ran (skips without Chromium)."""
    browser = _chromium()
    if browser is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium is not installed: .ci/run installs Debian's chromium package")
        pytest.skip("Chromium is not installed here (CI installs it)")
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
            f"--user-data-dir={profile}",
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
    errors = [
        line for line in done.stderr.splitlines() if "CONSOLE" in line and ("Uncaught" in line or "Error" in line)
    ]
    assert errors == []
    return done.stdout


def test_html_report_loads_in_headless_chromium(run_folder: Folder, tmp_path: Path) -> None:
    folder, _, _ = run_folder
    page = folder / "report.html"
    html = page.read_text()
    for external in ('src="http', "src='http", 'href="http', "<link ", "@import", "url(http"):
        assert external not in html  # self-contained: nothing is fetched
    dom = _dump_dom(page, tmp_path / "profile")
    assert 'data-charts="4"' in dom  # every chart is there
    assert 'data-ready="1"' in dom  # and the page's script ran to the end
    for chart in ("rates", "forest", "confusion", "healing"):
        assert f'data-chart="{chart}"' in dom
    # the headline comes first: each comparison that matters, in one sentence
    assert dom.index('id="headline"') < dom.index('id="arms"')
    assert "trusting/memory: task success" in dom
    assert 'id="banner"' not in dom  # nothing failed
    # the verdict in one line beside the headline; yes/no as marks; a filter over the sessions
    assert dom.index('id="verdict"') < dom.index('id="headline"')
    assert re.search(r'<p id="verdict" class="undecided">\? UNDECIDED: none of 62 gates failed; [^<]+</p>', dom)
    assert 'id="undecided"' in dom
    assert 'id="next"' in dom
    assert 'id="task-filter"' in dom
    assert 'id="task-failed"' in dom
    tasks = dom[dom.index('id="tasks"') :]
    assert ">True<" not in tasks
    assert ">False<" not in tasks
    assert "\u2713" in tasks
    assert "\u2717" in tasks
    assert "A <em>genuine</em> memory was true when it was written" in dom


def test_a_failed_gate_is_a_red_banner_at_the_top_of_the_page(evaluation: Evaluation, tmp_path: Path) -> None:
    leaky = _with(evaluation.results, "trusting/memory", scope_leaks=3)
    (tmp_path / "run").mkdir()
    write_reports(tmp_path / "run", leaky, evaluation.tables, gates(leaky), ("html",))
    dom = _dump_dom(tmp_path / "run" / "report.html", tmp_path / "profile")
    assert 'id="banner"' in dom
    assert dom.index('id="verdict"') < dom.index('id="banner"') < dom.index('id="headline"') < dom.index('id="arms"')
    assert "1 gate(s) failed" in dom
    assert re.search(r'<p id="verdict" class="fail">\u2717 FAIL: 1 of \d+ gates failed</p>', dom)
    gates_table = dom[dom.index('id="gates"') :]
    assert gates_table.index("\u2717 FAIL") < gates_table.index("? not exercised") < gates_table.index("\u2713 pass")
    assert f"trusting/memory: {_SCOPE}: 3 breaches" in dom


def _comparison(metric: str, a: str, b: str, verdict: ComparisonVerdict, a_value: float, b_value: float) -> Comparison:
    p = 0.001 if verdict in {ComparisonVerdict.IMPROVED, ComparisonVerdict.REGRESSED} else 0.4
    diff = a_value - b_value
    return Comparison(metric, a, b, "mcnemar-exact", a_value, b_value, diff, diff, diff, p, 100, p, verdict)


ARMS = {
    "no-memory/sqlite": ArmResult("no-memory", "sqlite", Role.CONTROL, {}),
    "trusting/sqlite": ArmResult("trusting", "sqlite", Role.HARM_PROBE, {}),
    "jit-verify/sqlite": ArmResult("jit-verify", "sqlite", Role.TREATMENT, {}),
}


def _run(*comparisons: Comparison) -> RunResults:
    return RunResults(RunMeta(), ARMS, comparisons)


def test_the_no_harm_gate_fails_when_a_treatment_is_significantly_worse() -> None:
    from memstore.harness.report import no_harm_gates

    good = [
        _comparison("merge_rate", "jit-verify/sqlite", "no-memory/sqlite", ComparisonVerdict.IMPROVED, 0.9, 0.8),
        _comparison("answer_accuracy", "jit-verify/sqlite", "no-memory/sqlite", ComparisonVerdict.NO_CHANGE, 0.9, 0.9),
    ]
    bad = _comparison(
        "review_precision", "jit-verify/sqlite", "no-memory/sqlite", ComparisonVerdict.REGRESSED, 0.7, 0.95
    )
    (passed,) = no_harm_gates(_run(*good))
    assert passed.passed
    assert passed.name == "jit-verify/sqlite: not significantly worse than the control"
    (failed,) = no_harm_gates(_run(*good, bad))
    assert failed.failed
    assert failed.message == "review_precision 0.700 vs 0.950 (p = 0.001)"
    (unmeasured,) = no_harm_gates(_run())
    assert unmeasured.outcome is Outcome.NOT_EXERCISED  # a gate with nothing compared does not pass by default
    assert unmeasured.advice == "needs a control arm (no-memory) on the same tasks"
    assert [g.name for g in gates(_run(*good, bad)) if g.failed] == [
        "jit-verify/sqlite: not significantly worse than the control"
    ]
    # neither worse nor shown not worse: inconclusive, with about how many tasks would rule harm out
    wide = replace(good[1], low=-0.10, high=0.10, diff=0.0, n=100)
    (open_,) = no_harm_gates(RunResults(RunMeta(tasks=100), ARMS, (wide,)))
    assert open_.outcome is Outcome.INCONCLUSIVE
    assert (open_.tasks_needed, open_.advice) == (400, "about 400 tasks (100 now) would rule it out")


def test_the_harm_seen_gate_fails_when_trusting_is_not_measurably_harmed() -> None:
    from memstore.harness.report import harm_seen_gate

    harmed = _run(
        _comparison("merge_rate", "trusting/sqlite", "no-memory/sqlite", ComparisonVerdict.REGRESSED, 0.4, 0.8)
    )
    unharmed = _run(
        _comparison("merge_rate", "trusting/sqlite", "no-memory/sqlite", ComparisonVerdict.UNDERPOWERED, 0.78, 0.8),
        _comparison("stale_use_rate", "trusting/sqlite", "no-memory/sqlite", ComparisonVerdict.REGRESSED, 0.3, 0.0),
    )
    assert harm_seen_gate(harmed).passed
    gate = harm_seen_gate(unharmed)
    assert gate.failed  # stale use alone is not harm to an outcome, and merge's interval rules out harm of 5%
    assert gate.message == ("merge_rate 0.780 vs 0.800 (underpowered, p = 0.4); harm of 5% or more is ruled out")
    wide = replace(unharmed.comparisons[0], low=-0.20, high=0.16)
    open_ = harm_seen_gate(RunResults(RunMeta(tasks=50), ARMS, (wide,)))
    assert open_.outcome is Outcome.INCONCLUSIVE  # -2 points, [-20, +16]: harm neither shown nor ruled out
    assert open_.advice == "about 4,050 tasks (50 now) would show it"
    assert harm_seen_gate(_run()).outcome is Outcome.NOT_EXERCISED


def test_the_verifier_gates_fail_below_their_bars() -> None:
    from memstore.harness.report import verifier_gates

    good = {
        "detection_recall": Rate(97, 100),
        "false_invalidation_rate": Rate(1, 100),
        "reanchor_accuracy": Rate(39, 40),
    }
    found = verifier_gates(ArmResult("jit-verify", "sqlite", Role.TREATMENT, good), "jit", tasks=100)
    assert [g.outcome for g in found] == [Outcome.INCONCLUSIVE, Outcome.INCONCLUSIVE, Outcome.PASSED]
    assert found[0].message == "0.970 (97/100) [0.924, 0.992] (bar >= 0.95): its interval straddles the bar"
    assert found[0].advice == "about 197 tasks (100 now) would decide it"
    many = {name: Rate(rate.k * 10, rate.n * 10) for name, rate in good.items()}
    assert all(g.passed for g in verifier_gates(ArmResult("jit-verify", "sqlite", Role.TREATMENT, many), "jit"))
    bad = {**many, "detection_recall": Rate(90, 100), "reanchor_accuracy": None}
    shown = [
        (g.name, g.outcome, g.message)
        for g in verifier_gates(ArmResult("jit-verify", "sqlite", Role.TREATMENT, bad), "jit")
        if not g.passed
    ]
    assert shown == [
        ("jit: detection_recall >= 0.95", Outcome.FAILED, "0.900 (90/100) [0.836, 0.945] (bar >= 0.95)"),
        ("jit: reanchor_accuracy >= 0.8", Outcome.NOT_EXERCISED, "not measured (bar >= 0.8)"),
    ]
    refuses = {**many, "false_invalidation_rate": Rate(1000, 1000)}  # a verifier that refuses every memory
    gate = verifier_gates(ArmResult("jit-verify", "sqlite", Role.TREATMENT, refuses), "jit")[1]
    assert (gate.name, gate.outcome) == ("jit: false_invalidation_rate <= 0.02", Outcome.FAILED)


def test_an_arm_that_lost_every_session_to_the_infrastructure_fails_its_gate(run_folder: Folder) -> None:
    _, results, _ = run_folder
    lost = _with(results, "jit-verify/memory", infra_error_rate=Rate(4, 4))
    (gate,) = [g for g in gates(lost) if g.name == "jit-verify/memory: sessions without an infrastructure error > 0"]
    assert (gate.passed, gate.integrity) == (False, True)
    assert (
        gate.message
        == "infrastructure errors (timeouts, model endpoint) in 4 of 4 sessions (every one): nothing was measured"
    )
    some = _with(results, "jit-verify/memory", infra_error_rate=Rate(1, 4))
    assert all(g.passed for g in gates(some) if "infrastructure" in g.name)


def test_markdown_shows_text_from_the_run_as_text(run_folder: Folder) -> None:
    """An agent command (or store, or scenario text) with HTML, a link or a table bar in it is
    printed as text in report.md: a CI job summary renders no tag and breaks no table."""
    from memstore.harness.report import render_markdown

    _, results, _ = run_folder
    hostile = "command:<img src=x onerror=alert(1)> [click](javascript:alert(2)) | cell"
    arms = {(hostile if name.startswith("trusting") else name): arm for name, arm in results.arms.items()}
    text = render_markdown(replace(results, arms=arms), [])
    assert "<img" not in text
    assert "[click](javascript:" not in text  # escaped: [click]\\(...) is no link
    assert "command:&lt;img src=x onerror=alert(1)&gt; [click]\\(javascript:alert(2)) \\| cell" in text


def test_arms_of_one_stub_with_budgets_of_their_own_get_short_names_told_apart() -> None:
    from memstore.harness.report.terminal import legend, short_names

    arms = {
        f"{agent}/sqlite": ArmResult(agent, "sqlite", Role.TREATMENT, {})
        for agent in ("jit-verify", "jit-verify[reads=2]", "jit-verify[searches=1]")
    }
    results = RunResults(run=RunMeta(), arms=arms, comparisons=())
    assert short_names(results) == {
        "jit-verify/sqlite": "jit-verify",
        "jit-verify[reads=2]/sqlite": "jit-verify'1",
        "jit-verify[searches=1]/sqlite": "jit-verify'2",
    }
    assert "jit-verify'1 = jit-verify[reads=2]" in legend(results)


def test_a_forest_of_many_comparisons_shows_the_smallest_adjusted_p_values_and_says_so() -> None:
    many = [
        replace(
            _comparison("task_success_rate", f"arm-{i:03d}", "no-memory/sqlite", ComparisonVerdict.NO_CHANGE, 0.5, 0.4),
            p_adjusted=1.0 - i / 1000,
        )
        for i in range(200)
    ]  # fmt: skip
    svg = forest_chart(many)
    assert "the 60 of 200 comparisons with the smallest adjusted p-values" in svg
    assert ("arm-199" in svg, "arm-140" in svg, "arm-139" in svg) == (True, True, False)
    few = forest_chart(many[:10])
    assert ("of 10 comparisons" in few, "arm-000" in few) == (False, True)
