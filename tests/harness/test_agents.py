"""The stub agents on library scenarios: what each does with the memories it is given."""

from __future__ import annotations

import pytest

from memstore.errors import ConfigurationError
from memstore.harness.agents import AgentConfig, make_agent
from memstore.harness.runner import Arm
from tests.harness.conftest import SURE, run_arms


def _kinds(output, agent: str, task: str | None = None) -> list[tuple[str, str, str]]:  # type: ignore[no-untyped-def]
    return [
        (e["kind"], e["truth"], e["detail"])
        for e in output.events
        if e["agent"] == agent and (task is None or e["task"] == task) and e["kind"] != "retrieve"
    ]


def test_jit_verify_refuses_and_retires_adversarial_memories_and_refreshes_the_good_one() -> None:
    output = run_arms(["adversarial-memories"], [Arm("jit-verify", "memory://")], agent_config=SURE)
    kinds = _kinds(output, "jit-verify")
    refused = sorted(truth for kind, truth, _ in kinds if kind == "refuse")
    retired = sorted(truth for kind, truth, _ in kinds if kind == "retire")
    assert refused == ["contradicted", "missing", "unsupported"]
    assert retired == ["missing", "unsupported"]  # the contradicted one is corrected instead
    assert ("refresh", "valid", "") in kinds
    assert next(k for k in kinds if k[0] == "correct")[1] == ""  # the correction is a new memory


def test_trusting_uses_what_it_is_given_and_never_verifies() -> None:
    output = run_arms(["adversarial-memories"], [Arm("trusting", "memory://")], agent_config=SURE)
    (session,) = output.sessions
    assert session["verify_reads"] == 0
    assert session["stale_use"] is True
    assert {k[0] for k in _kinds(output, "trusting")} <= {"use", "edit", "merge"}


def test_no_memory_reads_no_memories() -> None:
    output = run_arms(["adversarial-memories"], [Arm("no-memory", "memory://")], agent_config=SURE)
    (session,) = output.sessions
    assert session["handed"] == 0
    assert session["merged"] is False  # with no luck, the other two files are never found


def test_moved_memory_is_reanchored_and_its_correction_stored() -> None:
    output = run_arms(["api-version-moved"], [Arm("jit-verify", "memory://")], agent_config=SURE)
    kinds = _kinds(output, "jit-verify")
    assert (
        "reanchor",
        "moved",
        "src/client/sdk/constants.ts:14;server/routes/api.go:8;docs/api-reference.md:37",
    ) in kinds
    (session,) = output.sessions
    assert (session["moved_given"], session["moved_reanchored"], session["merged"]) == (1, 1, True)


def test_read_only_user_cannot_store_its_correction() -> None:
    output = run_arms(["read-only-writer"], [Arm("jit-verify", "memory://")], agent_config=SURE)
    denied = [d for kind, _, d in _kinds(output, "jit-verify") if kind == "denied"]
    assert denied == ["correct: 'rae' needs write access to 'acme/api' to store a repository fact"]
    (session,) = output.sessions
    assert session["answer_correct"] is True  # it still answers from its own re-anchored reading


def test_the_seeds_cross_agent_flow() -> None:
    output = run_arms(["cross-agent-logging"], [Arm("jit-verify", "sqlite:")], agent_config=SURE)
    stored = [e["memory_id"] for e in output.events if e["kind"] == "store"]
    assert len(stored) == 1  # code review learns the convention
    uses = [(e["task"], e["memory_id"]) for e in output.events if e["kind"] == "use"]
    assert uses == [("implement-refund-logging", stored[0]), ("find-payment-error", stored[0])]
    verdicts = [(e["task"], e["detail"]) for e in output.events if e["kind"] == "verdict"]
    assert verdicts == [("implement-refund-logging", "valid"), ("find-payment-error", "valid")]
    _review, coding, cli = output.sessions
    assert coding["merged"] is True
    assert cli["answer_correct"] is True


def test_same_seed_same_sessions() -> None:
    first = run_arms(["db-pool-contradicted"], [Arm("jit-verify", "memory://")], seed=3)
    second = run_arms(["db-pool-contradicted"], [Arm("jit-verify", "memory://")], seed=3)
    assert first.sessions == second.sessions
    assert first.events == second.events


def test_agent_config_parse() -> None:
    assert AgentConfig.parse(["explore=0.25", "slip=0"]) == AgentConfig(explore=0.25, slip=0.0)
    with pytest.raises(ConfigurationError, match="unknown agent parameter 'luck'"):
        AgentConfig.parse(["luck=1"])
    with pytest.raises(ConfigurationError, match="is a probability"):
        AgentConfig.parse(["explore=2"])


def test_unknown_agent_names_the_known_ones() -> None:
    with pytest.raises(ConfigurationError, match="known: no-memory, trusting, jit-verify, command:CMD"):
        make_agent("clever")
