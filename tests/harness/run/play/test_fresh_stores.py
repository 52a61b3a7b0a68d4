"""A third-party store that keeps its memories outside the process declares how a trial gets a
fresh one (`memstore.backends.per_trial`), and every trial of a run gets its own: nothing a
trial's agent stored reaches another trial, whatever the store's name."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from memstore.backends import StoreOptions, TrialStore, per_trial
from memstore.backends.sqlite import SqliteStore, open_sqlite
from memstore.errors import ConfigurationError
from memstore.harness.grading.trial import TrialGrading
from memstore.harness.run.play.stores import check_store_uri, trial_store
from memstore.harness.run.runner.pool import Arm, RunConfig, check_config, run
from memstore.store import BACKENDS
from tests.harness.conftest import scenario

OPENED: list[str] = []  # every URI the team's factory was opened with, in order
CLOSED: list[str] = []  # and every one closed, in order


def _team_trial(uri: str, folder: Path) -> TrialStore:
    """``teamfile:`` alone: a fresh file in the trial's private folder; a path: that file."""
    rest = uri.partition(":")[2]
    if not rest.strip("/"):
        path = folder / "team.db"
        return TrialStore(f"teamfile:///{path}", files=(path,), shared=True)
    return TrialStore(uri, shared=True)


class _TeamStore(SqliteStore):
    def close(self) -> None:
        CLOSED.append(str(self.path))
        super().close()


@per_trial(_team_trial, hint="use 'teamfile:' (a private file per trial)")
def open_teamfile(uri: str, options: StoreOptions) -> SqliteStore:
    """A store another project ships: memories in a file, by its own scheme."""
    OPENED.append(uri)
    store = open_sqlite("sqlite:" + uri.partition(":")[2], options)
    store.__class__ = _TeamStore
    return store


@pytest.fixture(autouse=True)
def _registered() -> object:
    OPENED.clear()
    CLOSED.clear()
    with BACKENDS.registration("teamfile", open_teamfile):
        yield


def test_every_trial_of_a_third_party_store_opens_its_own_fresh_store() -> None:
    config = RunConfig(
        scenarios=(scenario("api-version-moved"),),
        arms=(Arm("jit-verify", "teamfile:"), Arm("trusting", "teamfile:")),
        trials=2,
    )
    check_config(config)
    OPENED.clear()  # the check opened one in a scratch folder: not a trial's
    CLOSED.clear()
    output = run(config, grading=TrialGrading)
    assert output.failures == []
    folders = [Path(uri.removeprefix("teamfile://")).parent for uri in OPENED]
    assert len(OPENED) == 4  # 2 arms x 2 trials, one store each
    assert len(set(folders)) == 4
    assert all(folder.name.startswith("store-") for folder in folders)
    assert not any(folder.exists() for folder in folders)  # each trial's store went with it
    # and was closed when its trial ended (a store over a server process ends that process)
    assert [Path(path).parent.name for path in CLOSED] == [folder.name for folder in folders]
    seeded = {row.seeded for row in output.trials}
    assert seeded == {len(scenario("api-version-moved").memories)}  # no trial inherits another's memories


def test_the_trials_own_store_is_kept_from_the_agent_and_shared_with_its_mcp_server(tmp_path: Path) -> None:
    _, guard, shared = trial_store(
        "teamfile:", scenario="s", trial=0, arm="a/b", seed=0, expiry=timedelta(days=28), where=tmp_path
    )
    assert shared == f"teamfile:///{tmp_path / 'team.db'}"
    assert guard.paths == (tmp_path / "team.db",)


def test_a_uri_naming_one_store_for_every_trial_is_refused_with_the_backends_hint(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"names one store for every trial.*use 'teamfile:' \(a private"):
        check_store_uri(f"teamfile:///{tmp_path / 'one.db'}")
    check_store_uri(f"teamfile:///{tmp_path}/{{scenario}}-{{trial}}-{{arm}}.db")  # one per trial: accepted


def test_a_store_that_declares_nothing_is_opened_as_given_in_every_trial(tmp_path: Path) -> None:
    _, guard, shared = trial_store(
        "memory:", scenario="s", trial=0, arm="a", seed=0, expiry=timedelta(days=28), where=tmp_path
    )
    assert (shared, guard.paths) == (None, ())
