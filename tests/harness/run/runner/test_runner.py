"""The runner: pairing, determinism, and the harness's own checks on stores that break the rules."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memstore import Actor, Memory, Surface, backends
from memstore.backends import register_backend
from memstore.backends.memory import InMemoryStore
from memstore.harness.grading.trial import TrialGrading
from memstore.harness.records import row
from memstore.harness.run.runner.pool import Arm, iter_arms
from tests.harness.conftest import run_arms


class LeakyStore(InMemoryStore):
    """A broken store for the test: hands every fact of every repository to anyone."""

    def recent(self, repo: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        everyone = [m for m in self._t.records.values() if m.status.value == "active"]
        return sorted(everyone, key=lambda m: m.id)[:limit]


class ForgetfulClockStore(InMemoryStore):
    """A broken store for the test: never expires anything."""

    def _cutoff(self, now):  # type: ignore[no-untyped-def]
        return now - timedelta(days=10_000)


@pytest.fixture(autouse=True)
def broken_stores(monkeypatch: pytest.MonkeyPatch) -> None:
    """Register the broken stores for these tests only."""
    monkeypatch.setattr(backends.BACKENDS, "registered", dict(backends.BACKENDS.registered))
    register_backend("leaky")(lambda uri, options: LeakyStore(options))
    register_backend("forgetful")(lambda uri, options: ForgetfulClockStore(options))


def test_arms_pair_up_across_stores() -> None:
    output = run_arms(
        ["api-version-contradicted"], [Arm("jit-verify", "memory://"), Arm("jit-verify", "sqlite:")], trials=2, seed=11
    )
    by_arm: dict[str, list[dict[str, object]]] = {}
    for session in output.sessions:
        by_arm.setdefault(session.arm, []).append({k: v for k, v in row(session).items() if k not in {"arm", "store"}})
    assert by_arm["jit-verify/memory"] == by_arm["jit-verify/sqlite"]


def test_trials_differ_but_repeat() -> None:
    """With a budget of two files for three places, which two a stub opens is its seeded
    choice: trials differ, and the same seed repeats them."""
    narrow = Arm("no-memory[reads=2]", "memory://")
    one = run_arms(["api-version-control"], [narrow], trials=6, seed=1)
    two = run_arms(["api-version-control"], [narrow], trials=6, seed=1)
    assert one.sessions == two.sessions
    assert one.events == two.events
    edited = {}
    for e in one.events:
        if e.kind == "edit":
            edited.setdefault(e.trial, set()).add(e.detail.split(":")[0])
    assert all(len(files) == 2 for files in edited.values())
    assert len({frozenset(files) for files in edited.values()}) >= 2
    assert [s.outcome.merged for s in one.sessions] == [False] * 6  # two of three places is not enough


def test_a_leaky_store_is_caught() -> None:
    output = run_arms(["other-repo-no-leak"], [Arm("trusting", "leaky://")])
    assert sum(s.leaks for s in output.sessions) > 0
    leaked = {e.memory_id: e.detail.split(":")[0] for e in output.events if e.kind == "breach"}
    # the other repository's fact and the other user's preference
    assert sorted(leaked.values()) == ["preference_leaks", "scope_leaks"]


def test_a_store_that_never_expires_is_caught() -> None:
    output = run_arms(["expiry-and-refresh"], [Arm("trusting", "forgetful://")])
    assert sum(s.expiry_violations for s in output.sessions) > 0
    details = {e.detail for e in output.events if e.kind == "breach"}
    assert "expired_returned: expired, still returned by get()" in details


def test_reference_stores_break_no_rule() -> None:
    output = run_arms(
        ["other-repo-no-leak", "expiry-and-refresh"],
        [Arm(a, s) for a in ("trusting", "jit-verify") for s in ("memory://", "sqlite:")],
    )
    assert sum(s.leaks + s.expiry_violations for s in output.sessions) == 0


def test_refresh_keeps_a_memory_alive_that_trusting_lets_expire() -> None:
    output = run_arms(["expiry-and-refresh"], [Arm("trusting", "memory://"), Arm("jit-verify", "memory://")])
    later = {s.arm: s for s in output.sessions if s.task == "bump-minor"}
    assert later["jit-verify/memory"].handed == 1
    assert later["trusting/memory"].handed == 0
    assert (later["jit-verify/memory"].recall.needed_at_5, later["trusting/memory"].recall.needed_at_5) == (True, False)
    expired = [e for e in output.events if e.kind == "expired"]
    assert {e.arm for e in expired} == {"trusting/memory", "jit-verify/memory"}  # old-timeout expires for all


def test_iter_arms_runs_the_control_once() -> None:
    assert [a.name for a in iter_arms(["no-memory", "jit-verify"], ["sqlite:", "memory://"])] == [
        "no-memory/sqlite",
        "jit-verify/sqlite",
        "jit-verify/memory",
    ]


@pytest.mark.parametrize("workers", [2])
def test_workers_do_not_change_the_results(workers: int) -> None:
    arms = [Arm("jit-verify", "memory://"), Arm("trusting", "memory://")]
    names = ["api-version-moved", "db-pool-revert", "jest-to-vitest"]
    assert run_arms(names, arms, trials=2, workers=workers).sessions == run_arms(names, arms, trials=2).sessions


def test_a_verdict_is_kept_for_the_trial_while_main_stays_and_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A memory verified again on the same commit of main is not verified twice in a trial (the
    code at a commit never changes); the events are the ones a verification every time gives."""
    from memstore.harness.run.boundary import session as boundary
    from memstore.harness.run.play import loop as trial
    from memstore.harness.run.runner.pool import RunConfig, run
    from tests.harness.conftest import scenario

    calls: list[tuple[str, str | None]] = []
    real = boundary.verify_memory

    def counted(memory: Memory, codebase: object, **kwargs: object) -> object:
        calls.append((memory.id, codebase.commit))  # type: ignore[attr-defined]
        return real(memory, codebase, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(boundary, "verify_memory", counted)
    config = RunConfig(scenarios=(scenario("files-change-together"),), arms=(Arm("jit-verify", "sqlite:"),), workers=1)
    kept = run(config, grading=TrialGrading)
    verdicts = [e for e in kept.events if e.kind == "verdict"]
    assert len(calls) == len(set(calls)) < len(verdicts)  # each (memory, commit) once; some sessions asked again
    once = len(calls)
    real_gateway = trial._Trial._gateway

    def unkept(self: trial._Trial, task: object) -> object:
        found = real_gateway(self, task)  # type: ignore[arg-type]
        found.verdicts = None
        return found

    monkeypatch.setattr(trial._Trial, "_gateway", unkept)
    every = run(config, grading=TrialGrading)
    assert len(calls) - once == len(verdicts)  # verified every time now
    assert every.events == kept.events
    assert every.sessions == kept.sessions
