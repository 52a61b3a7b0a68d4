"""Executors: the same run on a local process pool and on a real local Ray instance gives the
same results.json, byte for byte; and what cannot run is refused up front."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from memstore.cli import main
from memstore.errors import ConfigurationError
from memstore.harness.run.runner.executors import check_executor, ray_address
from tests.extras import need

ROOT = Path(__file__).parents[1]
SCENARIOS = [
    str(ROOT / "scenarios" / f"{n}.yaml") for n in ("api-version-moved", "api-docs-deleted", "expiry-and-refresh")
]


@pytest.mark.slow
def test_ray_and_local_give_the_same_bytes(tmp_path: Path) -> None:
    need("ray")
    runs = {}
    for executor in ("local", "ray"):
        out = tmp_path / executor
        result = CliRunner().invoke(
            main, ["eval", *SCENARIOS, "--trials", "2", "--workers", "2", "--executor", executor, "--out", str(out)]
        )
        assert result.exit_code == 3, result.output  # undecided on two scenarios
        runs[executor] = out
    for name in ("results.json", "sessions.csv.gz", "events.csv.gz"):
        assert (runs["local"] / name).read_bytes() == (runs["ray"] / name).read_bytes(), name
    resumed = CliRunner().invoke(main, ["eval", "--resume", str(runs["ray"]), "--executor", "local"])
    assert resumed.exit_code == 3, resumed.output  # a run made on Ray resumes anywhere: nothing left to run


def test_executors_are_checked_before_anything_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigurationError, match="unknown executor 'dask'"):
        check_executor("dask")
    monkeypatch.setenv("RAY_ADDRESS", "ray://head:10001")
    assert ray_address("ray") == "ray://head:10001"
    assert ray_address("ray://other:10001") == "ray://other:10001"
    monkeypatch.delenv("RAY_ADDRESS")
    assert ray_address("ray") is None


def test_ray_without_ray_installed_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real = builtins.__import__

    def no_ray(name: str, *args: object, **kwargs: object) -> object:
        if name == "ray":
            raise ImportError("No module named 'ray'")
        return real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(ConfigurationError, match=r"pip install 'agent-memstore\[ray\]'"):
        check_executor("ray")
