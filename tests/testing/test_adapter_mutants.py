"""The store mutation suite on other projects' stores (``memcite:``, ``mem0:``, ``mcp:server-memory``,
``repomemory:``) and on memstore's own MCP server (``mcp:memstore``).

Each store mutant wraps the adapter as it wraps the reference stores; behind memstore's own
server, the mutant is the store the servers serve (``mcp:memstore?store=mutant:NAME:sqlite:``),
so a broken store must be caught through the server's tools. Where the adapter keeps a
promise (its identity wrapper passes that promise's gate), the mutant that breaks it must fail
that gate: the harness catches a broken memcite, mem0 or MCP server as it catches a broken
sqlite, except where no session reaches the promise through that store (`UNREACHED`). Where
the adapter itself already breaks the promise (a store with no users leaks preferences), the
mutant is not applicable, and the promises each adapter breaks are pinned here (docs/stores.md,
"Findings"): a store that changes shows up as a failing test.

Marked ``ci``: each adapter is a minute of evaluations behind other processes, so the README's
test command leaves this file out and ``.ci/run`` runs it as a step of its own (``pytest -m ci``).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from memstore.harness.evaluate import Evaluation, evaluate
from memstore.harness.run.runner.pool import RunConfig, fitted_workers, iter_arms
from memstore.harness.scenarios.loader import load_library
from memstore.testing.mutants import STORE_MUTANTS, mutant_uri
from tests.testing.test_mutants import KILLING, _failed_promises, hand_written_library

# What each adapter's own store breaks on the killing scenarios (jit-verify), gate by gate.
# No users or permissions anywhere: every fact write is accepted and get() shows anything to
# anyone; get() ignores expiry (none at all on the knowledge graph); only mem0 keeps a user's
# preferences to that user (by user_id), and none knows surfaces; memcite's ttl runs from
# creation, so a refreshed memory still drops out of recent() (forgotten).
BROKEN: dict[str, set[str]] = {
    # bettermemory: no users, permissions, surfaces or expiry (its calendar leg asks for a check, drops nothing)
    "bettermemory:": {"expired_returned", "get_leaks", "permission_breaches", "preference_leaks", "surface_leaks"},
    "memcite:": {
        "expired_returned",
        "forgotten",
        "get_leaks",
        "permission_breaches",
        "preference_leaks",
        "surface_leaks",
    },
    "mem0:": {"expired_returned", "get_leaks", "permission_breaches", "surface_leaks"},
    "mcp:server-memory": {"expired_returned", "get_leaks", "permission_breaches", "preference_leaks", "surface_leaks"},
    "mcp:memstore": set(),
    # Facto: no users, permissions, surfaces or expiry it enforces
    "facto:": {"expired_returned", "get_leaks", "permission_breaches", "preference_leaks", "surface_leaks"},
    # repo-memory: no users, permissions, surfaces or expiry at all, and one file per fact (a
    # memory with more citations comes back with its first: altered)
    "repomemory:": {
        "altered_memories",
        "expired_returned",
        "get_leaks",
        "permission_breaches",
        "preference_leaks",
        "surface_leaks",
    },
}

# Mutants of a promise the adapter keeps but that no session reaches through it: the agent finds
# memories with the store's own search, and a search that hands it nothing (server-memory's
# whole-query substring) leaves nothing to correct, retire or refresh on these scenarios. Pinned,
# so a store that starts finding them shows up.
UNREACHED: dict[str, set[str]] = {
    "bettermemory:": set(),
    "memcite:": set(),
    "mem0:": set(),
    "mcp:server-memory": {"drops-supersede", "ignores-refresh", "ignores-retire", "returns-superseded"},
    # These mutants leak only what they stored themselves, remembered in the process that stored
    # it; behind memstore's server each user, surface and repository has a server process of its
    # own, and the one that is asked (the outsider's, another user's, another repository's) stored
    # nothing. Pinned: a mutant that leaks what it did not store would be caught.
    "mcp:memstore": {"get-ignores-permissions", "other-repositories", "other-users-preferences"},
    "repomemory:": set(),
    # Facto's search is an FTS5 MATCH of the whole query (every word must be in the fact) with a
    # substring fallback: an agent's query finds nothing, so nothing is corrected or retired.
    "facto:": {"drops-supersede", "ignores-refresh", "ignores-retire", "returns-superseded"},
}


# The killing scenario each mutant runs on behind an adapter: one where it breaks its promise on
# the reference store and on every adapter that keeps that promise and reaches it (read off runs of
# every mutant on all five killing scenarios, on each adapter). One scenario a mutant, and jit-verify
# alone (the no-memory arm killed none that jit-verify did not), where the sqlite suite
# (test_mutants.py) runs both agents on all five: behind a server a unit starts a server process per
# user, surface and repository, and that whole grid took 100 s of the suite, 62 s of it behind
# memstore's own server. The identity wrapper runs on all five, where the adapter's own breaches show.
TARGET: dict[str, str] = {
    "never-expires": "expiry-and-refresh",
    "other-repositories": "other-repo-no-leak",
    "read-can-write": "read-only-writer",
    "other-users-preferences": "review-without-preferences",
    "preferences-on-review": "review-without-preferences",
}  # every other mutant: jest-to-vitest (retirement, supersession, writes, order, forgetting, alteration)


def _mutant(name: str, adapter: str) -> str:
    """The store URI of mutant ``name`` on ``adapter``: behind the server, for memstore's own."""
    if adapter == "mcp:memstore":
        return f"mcp:memstore?store={mutant_uri(name, 'sqlite:')}"
    return mutant_uri(name, adapter)


def _available(adapter: str) -> str | None:
    """Why ``adapter`` cannot run here, or None."""
    modules = {
        "bettermemory:": "bettermemory",
        "facto:": "facto",
        "memcite:": "agentic_memory",
        "mem0:": "mem0",
        "repomemory:": "repo_memory",
    }
    module = modules.get(adapter)
    if module is not None and importlib.util.find_spec(module) is None:
        return f"{adapter} needs its extra: pip install 'agent-memstore[{adapter.rstrip(':')}]'"
    if adapter == "mcp:server-memory" and shutil.which("mcp-server-memory") is None:
        return "mcp-server-memory is not installed: npm install -g @modelcontextprotocol/server-memory"
    return None


def _runs(adapter: str, mutants: list[str], folder: Path) -> list[Evaluation]:
    """jit-verify on the adapter's identity wrapper over the five killing scenarios, and on each
    mutant over its `TARGET` scenario: one run a scenario."""
    named = {stem: ["identity"] for stem in KILLING}
    for name in mutants:
        named[TARGET.get(name, "jest-to-vitest")].append(name)
    paths = {p.stem: p for p in hand_written_library() if p.stem in KILLING}
    runs = []
    for stem, names in named.items():
        arms = iter_arms(["jit-verify"], [_mutant(name, adapter) for name in names])
        config = RunConfig(scenarios=tuple(load_library([paths[stem]])), arms=tuple(arms), workers=2)
        runs.append(evaluate(replace(config, workers=fitted_workers(config)), folder / stem))
    return runs


@pytest.fixture(scope="module", params=sorted(BROKEN))
def adapter_runs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, list[Evaluation]]:
    adapter = str(request.param)
    missing = _available(adapter)
    if missing is not None:
        if os.environ.get("MEMSTORE_REQUIRE_THIRD_PARTY") == "1":
            pytest.fail(missing)
        pytest.skip(missing)
    # A mutant of a promise the adapter already breaks could show nothing more: not run.
    mutants = [n for n, m in STORE_MUTANTS.items() if m.caught_by and m.caught_by not in BROKEN[adapter]]
    return adapter, _runs(adapter, mutants, tmp_path_factory.mktemp("adapter-mutants"))


def _failed(runs: list[Evaluation], store: str) -> set[str]:
    """The promises whose gates ``store`` failed, in any of the runs."""
    return set().union(*(_failed_promises(run, store) for run in runs))


@pytest.mark.ci
@pytest.mark.slow
def test_every_mutant_of_a_kept_promise_fails_its_gate_on_the_adapter(
    adapter_runs: tuple[str, list[Evaluation]],
) -> None:
    adapter, runs = adapter_runs
    broken = _failed(runs, _mutant("identity", adapter))
    assert broken == BROKEN[adapter], sorted(broken)
    applicable = {name: m.caught_by for name, m in STORE_MUTANTS.items() if m.caught_by and m.caught_by not in broken}
    killed = {name: _failed(runs, _mutant(name, adapter)) - broken for name in applicable}
    missed = {name for name, found in killed.items() if found != {applicable[name]}}
    assert missed == UNREACHED[adapter]
    assert all(killed[name] == set() for name in missed)  # missed, never caught by another gate
