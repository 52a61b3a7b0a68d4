"""The stub agents on library scenarios: each acts on what it read and what it was handed, so
bad memory makes `trusting` worse, and `jit-verify` acts on the verified version."""

from __future__ import annotations

from typing import Any

import pytest

from memstore.agents.params import StubParams
from memstore.errors import ConfigurationError
from memstore.harness.run.boundary.agents import make_agent, split_params, with_params
from memstore.harness.run.output import Arm, RunOutput
from tests.harness.conftest import run_arms

ARMS = [Arm("no-memory", "memory://"), Arm("trusting", "memory://"), Arm("jit-verify", "memory://")]


def _events(output: RunOutput, agent: str, task: str | None = None, kind: str | None = None) -> list[dict[str, Any]]:
    return [
        e
        for e in output.events
        if e.agent == agent and (task is None or e.task == task) and (kind is None or e.kind == kind)
    ]


def _session(output: RunOutput, agent: str, task: str) -> dict[str, Any]:
    return next(s for s in output.sessions if s.agent == agent and s.task == task)


def test_a_moved_citation_sends_blind_trusting_to_the_wrong_line_and_jit_verify_to_the_right_one() -> None:
    arms = [*ARMS, Arm("blind-trusting", "memory://")]
    output = run_arms(["api-version-moved"], arms)
    agents = ("blind-trusting", "trusting", "jit-verify")
    edits = {agent: [e.detail for e in _events(output, agent, kind="edit")] for agent in agents}
    # The version moved from line 12 to 14 of constants.ts; the memory still says 12.
    assert "src/client/sdk/constants.ts:12" in edits["blind-trusting"]
    assert "src/client/sdk/constants.ts:14" in edits["jit-verify"]
    assert [e.detail for e in _events(output, "jit-verify", kind="reanchor")] == [
        "src/client/sdk/constants.ts:14;server/routes/api.go:8;docs/api-reference.md:37"
    ]
    assert _session(output, "blind-trusting", "bump-version").outcome.merged is False
    assert _session(output, "blind-trusting", "bump-version").stale_use is True  # the wrong line edited
    # trusting reads line 12, sees it no longer names the version, and looks for it itself
    assert "src/client/sdk/constants.ts:12" not in edits["trusting"]
    assert "src/client/sdk/constants.ts:14" in edits["trusting"]
    assert _session(output, "trusting", "bump-version").outcome.merged is True
    assert _session(output, "jit-verify", "bump-version").outcome.merged is True
    assert _session(output, "no-memory", "bump-version").outcome.merged is True  # it found the three places itself


def test_a_contradicted_fact_gives_trusting_the_stale_answer() -> None:
    output = run_arms(["db-pool-contradicted"], ARMS)
    answers = {
        agent: [e.detail for e in _events(output, agent, "pool-capacity", "answer")]
        for agent in ("no-memory", "trusting", "jit-verify")
    }
    assert answers == {"no-memory": ["20"], "trusting": ["10"], "jit-verify": ["20"]}
    assert [e.truth for e in _events(output, "trusting", "pool-capacity", "misled")] == ["contradicted"]
    assert _session(output, "jit-verify", "pool-capacity").outcome.answer_correct is True


def test_a_contradicted_helper_is_written_by_trusting_and_fails_the_test_suite() -> None:
    """db-pool-revert: a memory names `borrow_connection()`, a helper that was reverted."""
    output = run_arms(["db-pool-revert"], ARMS)
    assert _session(output, "trusting", "fix-invoices").outcome.merged is False  # the fixture's unittest suite fails
    assert _session(output, "trusting", "fix-invoices").stale_use is True
    assert _session(output, "jit-verify", "fix-invoices").outcome.merged is True
    assert _session(output, "no-memory", "fix-invoices").outcome.merged is True  # the handlers next to it show the way


def test_an_adversarial_instruction_makes_trusting_skip_a_required_file() -> None:
    output = run_arms(["adversarial-memories"], ARMS)
    trusting = [e.detail.split(":")[0] for e in _events(output, "trusting", "bump-version", "edit")]
    jit = [e.detail.split(":")[0] for e in _events(output, "jit-verify", "bump-version", "edit")]
    assert "docs/api-reference.md" not in trusting  # "never edit docs/"
    assert "docs/api-reference.md" in jit
    assert _session(output, "trusting", "bump-version").outcome.merged is False
    assert _session(output, "jit-verify", "bump-version").outcome.merged is True
    # the adversarial "v3.0.0" becomes trusting's answer; jit-verify refuses it
    assert [e.detail for e in _events(output, "trusting", "which-version", "answer")] == ["v3.0.0"]
    assert [e.detail for e in _events(output, "jit-verify", "which-version", "answer")] == ["v2.1.4"]


def test_jit_verify_refuses_and_retires_adversarial_memories_and_refreshes_the_good_one() -> None:
    output = run_arms(["adversarial-memories"], [Arm("jit-verify", "memory://")])
    events = _events(output, "jit-verify")
    refused = sorted({e.truth for e in events if e.kind == "refuse"})
    retired = sorted({e.truth for e in events if e.kind == "retire"})
    assert refused == ["contradicted", "missing", "unsupported"]
    assert retired == ["missing", "unsupported"]  # the contradicted one is corrected instead
    assert any(e.kind == "refresh" and e.truth == "valid" for e in events)
    assert next(e for e in events if e.kind == "correct").truth is None  # a correction is a new memory: no label


def test_trusting_never_verifies_and_no_memory_is_handed_nothing() -> None:
    output = run_arms(["adversarial-memories"], ARMS[:2])
    assert {s.lookups.verify_reads for s in output.sessions} == {0}
    assert {e.kind for e in _events(output, "trusting")} <= {"retrieve", "use", "edit", "answer", "misled"}
    assert {s.handed for s in output.sessions if s.agent == "no-memory"} == {0}
    assert _events(output, "no-memory", kind="retrieve") == []


def test_exploration_is_bounded_by_the_budget() -> None:
    """With one search, the no-memory stub finds the setting's name but cannot follow its value
    to the places that name it otherwise; with the default two it can."""
    wide = run_arms(["api-version-control"], [Arm("no-memory", "memory://")])
    narrow = run_arms(["api-version-control"], [Arm("no-memory[searches=1]", "memory://")])
    assert wide.sessions[0].outcome.merged is True
    assert narrow.sessions[0].outcome.merged is False
    assert narrow.sessions[0].lookups.searches == 1
    assert wide.sessions[0].lookups.searches == 2
    blind = run_arms(["api-version-control"], [Arm("no-memory[reads=1]", "memory://")])
    assert blind.sessions[0].outcome.merged is False
    assert blind.sessions[0].lookups.reads <= 1


def test_the_seeds_cross_agent_flow() -> None:
    """Review learns the retention rule and stores it; the coding agent uses what review
    learned; the CLI answer is graded against the value on main after that merge."""
    output = run_arms(["cross-agent-logging"], [Arm("jit-verify", "sqlite:")])
    stored = [e for e in output.events if e.kind == "store"]
    assert [e.task for e in stored] == ["review-retention"]
    review, coding, cli = output.sessions
    assert review.outcome.task_success is True
    assert coding.outcome.merged is True
    assert coding.recall.needed_at_5 is True  # the memory review stored was handed to the coding session
    assert cli.outcome.answer_correct is True


def test_same_seed_same_sessions() -> None:
    first = run_arms(["db-pool-contradicted"], [Arm("jit-verify", "memory://")], seed=3)
    second = run_arms(["db-pool-contradicted"], [Arm("jit-verify", "memory://")], seed=3)
    assert first.sessions == second.sessions
    assert first.events == second.events


def test_stub_params_parse() -> None:
    given = {"searches": "1", "reads": "3", "learn": "false"}
    assert StubParams.parse(given) == StubParams(searches=1, reads=3, learn=False)
    with pytest.raises(ConfigurationError, match="jit-verify: unknown agent parameter 'luck'"):
        StubParams.parse({"luck": "1"}, agent="jit-verify")
    with pytest.raises(ConfigurationError, match="whole number from 0 to 100"):
        StubParams.parse({"reads": "0.5"})
    with pytest.raises(ConfigurationError, match="true or false"):
        StubParams.parse({"learn": "maybe"})


def test_an_agent_spec_carries_its_own_parameters() -> None:
    assert split_params("jit-verify[searches=1,reads=4]") == ("jit-verify", {"searches": "1", "reads": "4"})
    assert split_params("jit-verify[]") == ("jit-verify", {})
    assert split_params("jit-verify") == ("jit-verify", {})
    assert split_params("command:python -c 'x[1]'") == ("command:python -c 'x[1]'", {})
    agent = make_agent("jit-verify[reads=4,learn=false]")
    assert agent.params == {"searches": 2, "reads": 4, "learn": False}  # type: ignore[attr-defined]
    assert make_agent("mutant:never-corrects[searches=1]").params["searches"] == 1  # type: ignore[attr-defined]
    with pytest.raises(ConfigurationError, match="no-memory: unknown agent parameter 'luck'"):
        make_agent("no-memory[luck=1]")


def test_a_run_wide_parameter_joins_each_agent_that_takes_parameters() -> None:
    assert with_params("jit-verify", ["searches=1"]) == "jit-verify[searches=1]"
    assert with_params("jit-verify[searches=3]", ["searches=1", "reads=2"]) == "jit-verify[reads=2,searches=3]"
    assert with_params("mutant:unverified", ["reads=2"]) == "mutant:unverified[reads=2]"
    assert with_params("command:python agent.py", ["reads=2"]) == "command:python agent.py"
    assert with_params("trusting", []) == "trusting"
    with pytest.raises(ConfigurationError, match="NAME=VALUE"):
        with_params("trusting", ["reads"])


def test_two_arms_run_one_stub_with_two_budgets() -> None:
    output = run_arms(
        ["api-version-control"], [Arm("no-memory", "memory://"), Arm("no-memory[searches=1]", "memory://")]
    )
    by_arm = {s.arm: s for s in output.sessions}
    assert by_arm["no-memory/memory"].outcome.merged is True
    assert by_arm["no-memory[searches=1]/memory"].outcome.merged is False
    assert (by_arm["no-memory/memory"].lookups.searches, by_arm["no-memory[searches=1]/memory"].lookups.searches) == (
        2,
        1,
    )


def test_unknown_agent_names_the_known_ones() -> None:
    with pytest.raises(ConfigurationError, match="known: blind-trusting, jit-verify, no-memory, trusting, command:CMD"):
        make_agent("clever")
