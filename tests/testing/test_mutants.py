"""The store mutation suite: the hand-written library must kill every store mutant through the
gate that names the promise it breaks, and pass the reference stores and the identity wrapper
(the hand-written scenarios alone kill them all; the mined ones, which add minutes, kill none
that they do not).

The mutants run on `KILLING`, five of the twenty hand-written scenarios that between them
hold, for every mutant, a scenario that kills it (read off a run of all twenty on every
mutant: ``evals/bench/mutation_suite.py`` runs that whole table); the reference stores and the
identity wrapper run on all twenty, where a false failure would show."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memstore import Access, AccessPolicy, Actor, Kind, MemoryDraft, Surface, open_store
from memstore.errors import ConfigurationError, NotFound
from memstore.harness.evaluate import Evaluation, evaluate
from memstore.harness.records import PROMISES
from memstore.harness.run.output import Arm
from memstore.harness.run.runner.pool import RunConfig, iter_arms
from memstore.harness.scenarios.data import scenarios_dir
from memstore.harness.scenarios.loader import load_library
from memstore.testing.mutants import STORE_MUTANTS, mutant_uri, split_mutant_uri

REFERENCE = ("sqlite:", "memory://", "ranked:")
# For each mutant, a scenario here counts its broken promise at least once (the full run's
# per-scenario counts): expiry-and-refresh the expiry, refresh, supersede and kept-writes
# promises; other-repo-no-leak the scopes; review-without-preferences the surfaces and the
# partial forgetting; read-only-writer the permissions; jest-to-vitest retirement and supersession.
KILLING = (
    "expiry-and-refresh",
    "jest-to-vitest",
    "other-repo-no-leak",
    "read-only-writer",
    "review-without-preferences",
)
_CONTRACT = re.compile(r"\((?P<metric>\w+) == 0\)$")


def hand_written_library() -> list[Path]:
    """The hand-written scenarios: the default library less the mined ones and the generated population."""
    root = scenarios_dir()
    return [p for p in sorted(root.glob("*.yaml")) if "generator:" not in p.read_text(encoding="utf-8")]


def _run(stores: list[str], scenarios: list[Path], folder: Path) -> Evaluation:
    """jit-verify and the no-memory control on ``stores``."""
    config = RunConfig(
        scenarios=tuple(load_library(scenarios)),
        arms=tuple(iter_arms(["jit-verify", "no-memory"], stores)),
        workers=2,
    )
    return evaluate(config, folder)


@pytest.fixture(scope="module")
def mutation_run(tmp_path_factory: pytest.TempPathFactory) -> Evaluation:
    """Every mutant that breaks a promise, on the scenarios that kill them."""
    stores = [mutant_uri(name, "sqlite:") for name, m in STORE_MUTANTS.items() if m.caught_by]
    killing = [p for p in hand_written_library() if p.stem in KILLING]
    assert len(killing) == len(KILLING)
    return _run(stores, killing, tmp_path_factory.mktemp("mutants"))


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory: pytest.TempPathFactory) -> Evaluation:
    """The reference stores and the identity wrapper, on the whole hand-written library."""
    stores = [*REFERENCE, mutant_uri("identity", "sqlite:")]
    return _run(stores, hand_written_library(), tmp_path_factory.mktemp("reference"))


def _failed_promises(evaluation: Evaluation, store: str) -> set[str]:
    label = Arm("jit-verify", store).store_label
    found = set()
    for gate in evaluation.failed:
        arm, _, rest = gate.name.partition(": ")
        match = _CONTRACT.search(rest)
        if arm.endswith(f"/{label}") and match:
            found.add(match["metric"])
    return found


@pytest.mark.slow
def test_every_store_mutant_fails_through_the_gate_of_the_promise_it_breaks(mutation_run: Evaluation) -> None:
    mutants = [name for name, m in STORE_MUTANTS.items() if m.caught_by]
    killed = {name: _failed_promises(mutation_run, mutant_uri(name, "sqlite:")) for name in mutants}
    expected = {name: {STORE_MUTANTS[name].caught_by} for name in mutants}
    assert killed == expected


@pytest.mark.slow
def test_the_reference_stores_and_the_identity_wrapper_pass_every_gate(reference_run: Evaluation) -> None:
    for store in (*REFERENCE, mutant_uri("identity", "sqlite:")):
        label = Arm("jit-verify", store).store_label
        failed = [g.name for g in reference_run.failed if g.name.split(": ")[0].endswith(f"/{label}")]
        assert failed == [], store


def test_every_mutant_is_caught_by_a_promise_the_harness_checks() -> None:
    metrics = {p.metric for p in PROMISES}
    assert {m.caught_by for m in STORE_MUTANTS.values() if m.caught_by} <= metrics
    assert len(STORE_MUTANTS) == 18


def test_a_mutant_uri_names_a_mutant_and_a_store() -> None:
    mutant, inner = split_mutant_uri("mutant:ignores-retire:sqlite:///tmp/x.db")
    assert (mutant.name, inner) == ("ignores-retire", "sqlite:///tmp/x.db")
    with pytest.raises(ConfigurationError, match="NAME one of identity, forgets-all"):
        split_mutant_uri("mutant:forgets-everything:sqlite:")
    assert Arm("jit-verify", "mutant:forgets-all:sqlite:").name == "jit-verify/forgets-all(sqlite)"


def _fact(n: int) -> MemoryDraft:
    return MemoryDraft("acme/api", Kind.FACT, f"subject {n}", f"fact number {n}", [f"src/a.py:{n}"], "why")


def test_a_mutant_wraps_any_store_and_breaks_only_its_promise() -> None:
    policy = AccessPolicy().grant("ana", "acme/api", Access.WRITE).grant("rae", "acme/api", Access.READ)
    honest = open_store("mutant:identity:memory://", access=policy)
    forgetful = open_store("mutant:forgets-all:memory://", access=policy)
    sloppy = open_store("mutant:ignores-retire:memory://", access=policy)
    for store in (honest, forgetful, sloppy):
        made = store.store(_fact(1), actor=Actor("ana"), surface=Surface.CLI)
        store.retire(made.id, actor=Actor("ana"), reason="gone")
        kept = store.store(_fact(2), actor=Actor("ana"), surface=Surface.CLI)
        assert store.get(kept.id, actor=Actor("rae")).fact == "fact number 2"
    assert [m.fact for m in honest.recent("acme/api", actor=Actor("rae"), surface=Surface.CLI)] == ["fact number 2"]
    assert forgetful.recent("acme/api", actor=Actor("rae"), surface=Surface.CLI) == []
    assert [m.fact for m in sloppy.recent("acme/api", actor=Actor("rae"), surface=Surface.CLI)] == [
        "fact number 2",
        "fact number 1",
    ]
    with pytest.raises(NotFound):
        honest.get(kept.id, actor=Actor("eve"))
