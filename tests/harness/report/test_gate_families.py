"""Gates are registered as metrics are (`memstore.harness.report.families`): memstore's own
families in their order, a plug-in's after them, and the arms a family judges chosen by what
they declare, never by an agent's name."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstore.harness.analysis.run_results import ArmResult, Role, RunResults
from memstore.harness.records import ArmMeta, RunMeta
from memstore.harness.report.families import GATES, every_family, gates
from tests.distributions import install

ARMS = {
    "no-memory/sqlite": ArmResult("no-memory", "sqlite", Role.CONTROL, {}),
    "jit-verify/sqlite": ArmResult("jit-verify", "sqlite", Role.TREATMENT, {}),
    "mine/sqlite": ArmResult("mine", "sqlite", Role.TREATMENT, {}),
}

PLUGIN = """
from memstore.harness.report.families import gate
from memstore.harness.report.gate import Gate, Outcome


@gate("careful", declares="careful")
def careful(run, arm):
    return [Gate(f"{arm}: careful", Outcome.PASSED, "declared careful", arm=arm, key="careful")]


@gate("budget", each_arm=True)
def budget(run, arm):
    return [Gate(f"{arm}: within budget", Outcome.PASSED, "", arm=arm, key="budget")]
"""


def _run(**declared: dict[str, bool]) -> RunResults:
    arms = tuple(ArmMeta.from_json({"name": name, **flags}) for name, flags in declared.items())
    return RunResults(RunMeta(arms=arms), ARMS, ())


def test_memstores_own_families_in_their_order() -> None:
    assert [f.name for f in every_family()][:6] == [
        "integrity",
        "contract",
        "no_harm",
        "harm_seen",
        "verifier",
        "baseline",
    ]


def test_the_verifier_judges_the_arms_that_declare_it_verifies_whatever_their_names() -> None:
    keys = {(g.arm, g.key) for g in gates(_run(**{"mine/sqlite": {"verifies": True}}))}
    assert ("mine/sqlite", "verifier[detection_recall]") in keys
    assert not any(key.startswith("verifier") for arm, key in keys if arm == "jit-verify/sqlite")


def test_a_plugin_family_joins_the_built_ins_and_chooses_arms_by_declaration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    every_family()
    monkeypatch.setattr(GATES, "registered", dict(GATES.registered))
    monkeypatch.setattr(GATES, "_loaded", False)
    install(tmp_path, "team-gates", {"memstore.gates": {"team": "team_gates"}}, monkeypatch, {"team_gates": PLUGIN})
    found = gates(_run(**{"jit-verify/sqlite": {"careful": True}}))
    assert [(g.arm, g.key) for g in found if g.key in {"careful", "budget"}] == [
        ("no-memory/sqlite", "budget"),
        ("jit-verify/sqlite", "budget"),
        ("mine/sqlite", "budget"),
        ("jit-verify/sqlite", "careful"),
    ]
    arm_first = [g.key for g in found if g.arm == "no-memory/sqlite"]
    assert arm_first.index("budget") > arm_first.index("integrity[tampering]")  # after the built-ins of each arm


def test_the_plan_holds_memstores_families_gate_by_gate_and_a_plugins_by_its_name() -> None:
    from memstore.harness.report import PLANNED, GateFamily, PlannedArm, plan

    assert [f.name for f in every_family()][: len(PLANNED)] == list(PLANNED)  # a new built-in must be planned
    arms = [
        PlannedArm("no-memory/sqlite", Role.CONTROL),
        PlannedArm("mine/sqlite", Role.TREATMENT, declares=frozenset({"careful"})),
        PlannedArm("naive/naive", Role.NEGATIVE_CONTROL, declares=frozenset({"careful"})),
    ]
    families = [
        *every_family()[: len(PLANNED)],
        GateFamily("careful", list, declares="careful"),
        GateFamily("budget", list, each_arm=True),
        GateFamily("cost", list),
    ]
    planned = plan(arms, families)
    assert planned[: len(plan(arms))] == plan(arms)  # memstore's own first, as before
    assert planned[len(plan(arms)) :] == [
        ("mine/sqlite", "careful"),  # a negative control is not judged by a declared capability
        ("no-memory/sqlite", "budget"),
        ("mine/sqlite", "budget"),
        ("naive/naive", "budget"),
        ("run", "cost"),
    ]
