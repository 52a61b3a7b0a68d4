"""How a run names its arms' stores."""

from __future__ import annotations

import pytest

from memstore.harness.run.output import Arm


@pytest.mark.parametrize(
    ("store", "label"),
    [
        ("sqlite:", "sqlite"),
        ("sqlite:///tmp/x.db", "sqlite"),
        ("memory://", "memory"),
        ("postgresql://ana@db:5432/memories", "postgresql"),
        ("memcite:", "memcite"),
        ("mypackage.mystore:open_store", "mypackage.mystore:open_store"),
        ("mcp:server-memory", "mcp:server-memory"),
        ("mutant:forgets-some:sqlite:", "forgets-some(sqlite)"),
        ("mutant:identity:mcp:server-memory", "identity(mcp:server-memory)"),
        ("mcp:memstore", "mcp:memstore"),
        ("mcp:memstore?store=mutant:forgets-some:sqlite:", "mcp:memstore(forgets-some(sqlite))"),
        ("mcp:memstore?store=ranked:&command=memstore mcp", "mcp:memstore(ranked)?command=memstore mcp"),
    ],
)
def test_a_store_is_named_by_its_scheme_or_its_name_and_what_it_serves(store: str, label: str) -> None:
    assert Arm("jit-verify", store).store_label == label
    assert Arm("jit-verify", store).name == f"jit-verify/{label}"
