"""``search:INNER``: memstore's own store handing by weighted ``search()``, beside ``recent()``.

On the same sample, the arm on ``search:sqlite:`` is handed the memory a task needs among its
first five far more often than the arm on ``sqlite:`` (recency), breaks no promise, and heals at
least as much; ``search:`` wraps only a reference store.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from memstore.backends import resolve_backend
from memstore.cli import main
from memstore.errors import ConfigurationError


@pytest.mark.slow
def test_search_hands_the_needed_memory_first_where_recency_does_not(tmp_path: Path) -> None:
    args = ["eval", "--sample", "60", "--agent", "jit-verify", "--store", "search:sqlite:", "--store", "sqlite:"]
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "run"), "--no-fail"])
    assert result.exit_code == 0, result.output
    arms = json.loads((tmp_path / "run" / "results.json").read_text())["arms"]
    searched, recent = arms["jit-verify/search:sqlite:"]["overall"], arms["jit-verify/sqlite"]["overall"]
    assert searched["needed_recall_at_5"]["value"] >= 0.9
    assert recent["needed_recall_at_5"]["value"] <= 0.5
    assert searched["self_heal_rate"]["value"] >= recent["self_heal_rate"]["value"]
    assert searched["leaks"] == 0
    assert searched["contract_breaches"] == 0
    events = pd.read_csv(tmp_path / "run" / "events.csv.gz")
    votes = events[events.kind == "vote"]
    assert len(votes) > 0  # jit-verify votes up what it verified and used, where votes count...
    assert set(votes.store) == {"search:sqlite:"}  # ...and only there: the recency arm's runs are as before
    assert set(votes.detail.str.split(":").str[0]) == {"up"}


def test_search_wraps_a_reference_store_only() -> None:
    with pytest.raises(ConfigurationError, match="search: wraps a reference store"):
        resolve_backend("search:mem0:")("search:mem0:", None)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="search: wraps a reference store"):
        resolve_backend("search:")("search:", None)  # type: ignore[arg-type]


def test_a_vote_over_mcp_is_an_event_of_the_session() -> None:
    from memstore.harness.records import EventKind
    from memstore.harness.run.boundary.mcp_bridge import replay_kind

    assert replay_kind("vote") is EventKind.VOTE
    assert EventKind("vote") is EventKind.VOTE
