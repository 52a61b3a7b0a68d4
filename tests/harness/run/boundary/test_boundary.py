"""The agent boundary: nothing an in-process agent is handed leads to labels or grading data."""

from __future__ import annotations

import gc
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from memstore.harness.grading.trial import TrialGrading
from memstore.harness.run.boundary import agents as agents_module
from memstore.harness.run.boundary.session import AgentSession
from memstore.harness.run.output import Arm
from memstore.harness.run.runner.pool import RunConfig, run
from memstore.harness.scenarios.loader import load_file
from memstore.harness.scenarios.scenario import Check, Finding, Origin, Scenario, SeedMemory, Task, Truth
from memstore.harness.world import Template, World

# Grading values no agent may reach: the answer, the check's texts, a finding's note.
SENTINELS = ("SENTINEL-ANSWER-7f3a", "SENTINEL_CHECK_TEXT_9b2c", "SENTINEL finding note 4d1e")
GRADING_TYPES = (Scenario, SeedMemory, Task, Check, Finding, World, Template, Truth, Origin)

SCENARIO = f"""\
name: boundary-probe
description: Grading values an agent must never reach.
fixture: api-version-sync
repo: acme/api
users:
  ana: {{acme/api: admin}}
  dev: {{acme/api: write}}
  rev: {{acme/api: read}}
history:
  - branch: pr-1
  - commit: Touch the server
    edits:
      - insert: {{path: server/main.go, line: 1, text: "// touched\\n"}}
  - switch: main
memories:
  - key: sync
    origin: stale
    truth: contradicted
    author: ana
    surface: coding_agent
    subject: API version
    fact: The API version is v9.9.9 everywhere.
    citations: [src/client/sdk/constants.ts:12]
    reason: Clients and server must agree.
    age: 2d
    claim:
      states: v9.9.9
      at: {{path: src/client/sdk/constants.ts, pattern: 'API_VERSION = "(v[0-9.]+)"'}}
tasks:
  - key: code
    surface: coding_agent
    user: dev
    after: 1h
    prompt: Set the API version to v2.2.0.
    intent: {{set: API version, to: v2.2.0}}
    needs: [sync]
    check:
      contains:
        - {{path: src/client/sdk/constants.ts, text: {SENTINELS[1]}}}
  - key: review
    surface: code_review
    user: rev
    after: 1h
    prompt: Review pull request 1.
    pull_request: {{branch: pr-1, base: main}}
    findings:
      - {{path: docs/api-reference.md, note: {SENTINELS[2]}}}
  - key: ask
    surface: cli
    user: dev
    after: 1h
    prompt: Which API version?
    intent: {{ask: API version}}
    question: Which API version must clients send?
    answer: {SENTINELS[0]}
"""


def _reachable(root: object) -> Iterator[object]:
    """Everything reachable from ``root`` through attributes, containers, closures and
    ``gc.get_referents``, stopping at modules, classes and module namespaces (what ``import``
    gives any code, not what the agent was handed)."""
    namespaces = {id(vars(m)) for m in list(__import__("sys").modules.values()) if m is not None}
    seen: set[int] = set()
    stack = [root]
    while stack:
        item = stack.pop()
        if id(item) in seen or isinstance(item, (types.ModuleType, type)) or id(item) in namespaces:
            continue
        seen.add(id(item))
        yield item
        referents: list[Any] = list(gc.get_referents(item))
        if isinstance(item, types.FunctionType):
            referents += [c.cell_contents for c in item.__closure__ or () if _filled(c)]
            referents = [r for r in referents if r is not item.__globals__]
        if isinstance(item, types.MethodType):
            referents += [item.__self__, item.__func__]
        for name in dir(type(item)):
            if isinstance(getattr(type(item), name, None), property):
                try:
                    referents.append(getattr(item, name))
                except Exception:  # a property that cannot be read on this object
                    continue
        stack.extend(referents)


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:
        return False
    return True


class Walker:
    """An in-process agent that walks everything it was handed, looking for grading data."""

    name = "walker"
    uses_memory = True
    found: ClassVar[list[str]] = []
    walked: ClassVar[list[int]] = []

    def __init__(self, config: object = None) -> None:
        pass

    def work(self, session: AgentSession) -> None:
        count = 0
        for item in _reachable(session):
            count += 1
            if isinstance(item, GRADING_TYPES):
                Walker.found.append(f"{session.task.key}: a {type(item).__name__}")
            elif isinstance(item, str) and any(s in item for s in SENTINELS):
                Walker.found.append(f"{session.task.key}: the string {item[:80]!r}")
        Walker.walked.append(count)


@pytest.fixture
def probe(tmp_path: Path) -> Scenario:
    path = tmp_path / "boundary-probe.yaml"
    path.write_text(SCENARIO)
    (scenario,) = load_file(path)
    return scenario


def test_an_agent_walking_everything_it_is_handed_finds_no_grading_data(
    probe: Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(agents_module.AGENTS.registered, "walker", Walker)
    Walker.found, Walker.walked = [], []
    out = run(RunConfig(scenarios=(probe,), arms=(Arm("walker", "sqlite:"),), workers=1), grading=TrialGrading)
    assert out.failures == []
    assert len(Walker.walked) == 3  # one walk per session
    assert min(Walker.walked) > 50  # it did walk: the session, its tools, the memory, the store
    assert Walker.found == []


def test_the_walker_finds_grading_data_when_it_is_there(probe: Scenario) -> None:
    """The walk is not blind: handed the scenario, it finds every sentinel and label."""
    found_types = {type(item).__name__ for item in _reachable(probe) if isinstance(item, GRADING_TYPES)}
    found_strings = {s for item in _reachable(probe) if isinstance(item, str) for s in SENTINELS if s in item}
    assert {"Scenario", "SeedMemory", "Task", "Check", "Finding", "Truth", "Origin"} <= found_types
    assert found_strings == set(SENTINELS)


def test_the_memory_handed_carries_no_label(probe: Scenario, monkeypatch: pytest.MonkeyPatch) -> None:
    """The memory itself is what the store returned: subject, fact, citations, reason; the
    truth and origin stay in the harness."""
    seen: list[dict[str, Any]] = []

    class Reader(Walker):
        def work(self, session: AgentSession) -> None:
            seen.extend(
                vars(m) if hasattr(m, "__dict__") else {f: getattr(m, f) for f in m.__dataclass_fields__}
                for m in session.memories
            )

    monkeypatch.setitem(agents_module.AGENTS.registered, "reader", Reader)
    run(RunConfig(scenarios=(probe,), arms=(Arm("reader", "sqlite:"),), workers=1), grading=TrialGrading)
    assert seen
    for fields in seen:
        assert set(fields) == {
            "id",
            "repo",
            "kind",
            "subject",
            "fact",
            "citations",
            "reason",
            "author",
            "surface",
            "created_at",
            "refreshed_at",
            "supersedes",
            "status",
            "retired_reason",
        }
        assert "contradicted" not in repr(fields)
        assert "stale" not in repr(fields)
