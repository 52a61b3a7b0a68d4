"""The control uses what the repository offers: a no-memory agent written apart from the stubs,
that reads every file of the working copy with no budget, does no better than the no-memory
stub on a sample of the default population; one that also guesses (it edits every constant
that holds the setting's value) does worse, since unrelated constants hold it too; and one that
guesses only where a kind of copy is missing does no better.

The readers here share no code with `memstore.agents.program` or `craft`: they parse lines
with their own patterns, so that the stub's blind spots are not theirs too."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from memstore.harness.analysis.run_results import Role
from memstore.harness.evaluate import Evaluation, evaluate
from memstore.harness.run.boundary.session import AgentSession
from memstore.harness.run.runner.pool import RunConfig, iter_arms
from memstore.harness.scenarios.loader import load_library
from memstore.harness.scenarios.scenario import IntentAction
from tests.testing.test_agent_mutants import population_sample

_ASSIGN = re.compile(r"^(?P<head>.*?\b(?P<key>[A-Za-z_]\w*)\s*=\s*)(?P<value>\d+)(?P<tail>;?\s*)$")
_ROW = re.compile(r"^(?P<head>\|\s*(?P<key>[^|]+?)\s*\|\s*)(?P<value>\d+)(?P<tail>\s*\|\s*)$")
_QUOTED = re.compile(r"'([^'\n]+)'|\"([^\"\n]+)\"|`([^`\n]+)`")
_WORD = re.compile(r"[A-Za-z_]\w*")


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _given(line: str) -> tuple[str, str] | None:
    """(key, value) of a line that gives a number to a key, in code or in a Markdown table."""
    found = _ASSIGN.match(line) or _ROW.match(line)
    return (found.group("key").strip(), found.group("value")) if found else None


class RepositoryReader:
    """Reads everything; follows every name the repository gives beside a known one (to a fixed
    point); edits, flags or answers every place that gives a value under a known name. With
    ``guess="all"``, also every place that holds the value under any name; with
    ``guess="missing"``, the one place of a kind of file (``.ts``, ``.md``) that holds the value
    under another name, when no place of that kind was found by name and there is only one."""

    uses_memory = False
    role = Role.TREATMENT

    def __init__(self, guess: str = "") -> None:
        self.guess = guess
        self.name = f"reader-guessing-{guess}" if guess else "repository-reader"

    def work(self, session: AgentSession) -> None:
        tools, task = session.tools, session.task
        files = {path: tools.lines(path) or [] for path in tools.files()}
        if task.pull_request is not None:
            self._review(session, files)
        elif task.intent is not None and task.intent.action is IntentAction.ASK:
            place = next(iter(self._places(files, task.intent.subject, None)), None)
            tools.give_answer(files[place[0]][place[1]] and _given(files[place[0]][place[1]])[1] if place else "")
        elif task.intent is not None and task.intent.action is IntentAction.SET:
            for path, index in self._places(files, task.intent.subject, None):
                line = files[path][index]
                found = _ASSIGN.match(line) or _ROW.match(line)
                assert found is not None
                files[path][index] = found.group("head") + task.intent.value + found.group("tail")
                tools.write(path, "\n".join(files[path]) + "\n")

    def _review(self, session: AgentSession, files: dict[str, list[str]]) -> None:
        pr = session.task.pull_request
        assert pr is not None
        removed = {
            k: v for line in pr.diff.splitlines() if line.startswith("-") and (g := _given(line[1:])) for k, v in [g]
        }
        added = {
            k: v for line in pr.diff.splitlines() if line.startswith("+") and (g := _given(line[1:])) for k, v in [g]
        }
        for key, old in removed.items():
            if added.get(key, old) == old:
                continue
            for path, _ in self._places(files, key, old):
                if path not in pr.changed_files:
                    session.tools.flag(path, f"still holds {old}")

    def _places(self, files: dict[str, list[str]], subject: str, value: str | None) -> list[tuple[str, int]]:
        names = self._names(files, subject)
        if value is None:
            value = next(
                (
                    v
                    for lines in files.values()
                    for line in lines
                    if (g := _given(line)) and _norm(g[0]) == _norm(subject)
                    for v in [g[1]]
                ),
                None,
            )
        named, holding = [], []
        for path, lines in sorted(files.items()):
            if path.startswith("tests/"):
                continue
            for index, line in enumerate(lines):
                given = _given(line)
                if given is not None and _norm(given[0]) in names:
                    named.append((path, index))
                elif given is not None and given[1] == value:
                    holding.append((path, index))
        if self.guess == "all":
            return named + holding
        if self.guess == "missing":
            kinds = {Path(p).suffix for p, _ in named}
            for kind in (".ts", ".md"):
                candidates = [(p, i) for p, i in holding if Path(p).suffix == kind]
                if kind not in kinds and len(candidates) == 1:
                    named += candidates
        return named

    @staticmethod
    def _names(files: dict[str, list[str]], subject: str) -> set[str]:
        """The subject's name and every name given beside it, and beside those, to a fixed point."""
        names, grown = {_norm(subject)}, True
        while grown:
            grown = False
            for lines in files.values():
                for line in lines:
                    if _given(line) is not None:
                        continue
                    mentioned = {_norm(w) for w in _WORD.findall(line)} | {
                        _norm(q) for m in _QUOTED.finditer(line) for q in m.groups() if q
                    }
                    if not mentioned & names:
                        continue
                    for m in _QUOTED.finditer(line):
                        quoted = _norm(next(q for q in m.groups() if q))
                        if quoted and not quoted.isdigit() and quoted != "none" and quoted not in names:
                            names.add(quoted)
                            grown = True
        return names


def careful_reader(config: object) -> RepositoryReader:
    return RepositoryReader()


def guessing_reader(config: object) -> RepositoryReader:
    return RepositoryReader(guess="all")


def gap_guessing_reader(config: object) -> RepositoryReader:
    return RepositoryReader(guess="missing")


@pytest.fixture(scope="module")
def control_run(tmp_path_factory: pytest.TempPathFactory) -> Evaluation:
    """Six repositories of the default population (120 tasks), the stub and the readers (twelve,
    240 tasks, gave the same order and rates within 0.02 of these, in twice the time)."""
    folder = tmp_path_factory.mktemp("control")
    path = population_sample(folder, "control-sample", 6)
    agents = ["no-memory", *(f"{__name__}:{f}" for f in ("careful_reader", "guessing_reader", "gap_guessing_reader"))]
    config = RunConfig(scenarios=tuple(load_library([path])), arms=tuple(iter_arms(agents, ["sqlite:"])), workers=1)
    return evaluate(config, folder / "run")


def _success(run: Evaluation, stratum: str | None = None) -> pd.Series:
    sessions = pd.read_csv(run.folder / "sessions.csv.gz", keep_default_na=False)
    if stratum is not None:
        sessions = sessions[sessions.stratum == stratum]
    return sessions.groupby("agent").task_success.mean().rename(lambda spec: spec.rpartition(":")[2])


@pytest.mark.slow
def test_an_agent_that_reads_everything_does_no_better_than_the_no_memory_stub(control_run: Evaluation) -> None:
    success = _success(control_run)
    assert len(pd.read_csv(control_run.folder / "sessions.csv.gz").query("arm == 'no-memory/sqlite'")) == 120
    assert success["careful_reader"] - success["no-memory"] <= 0.02, success
    # Where the repository offers the copies, both find them all; where it does not, neither does.
    discoverable, hidden = _success(control_run, "discoverable"), _success(control_run, "not discoverable")
    assert discoverable["no-memory"] == discoverable["careful_reader"] == 1.0
    assert hidden["no-memory"] == hidden["careful_reader"] == 0.0


@pytest.mark.slow
def test_guessing_from_the_value_costs_more_than_it_wins(control_run: Evaluation) -> None:
    """Unrelated constants hold the same values as settings (decoys): editing every holder of the
    value breaks them, on discoverable tasks too."""
    success, discoverable = _success(control_run), _success(control_run, "discoverable")
    assert success["guessing_reader"] < success["no-memory"] - 0.02, success
    assert discoverable["guessing_reader"] < 1.0
    # Guessing only where a kind of copy was not found, and only a lone candidate, wins some
    # tasks not discoverable and loses as many where there is no copy and the lone candidate is
    # a decoy: no better than the stub.
    assert success["gap_guessing_reader"] <= success["no-memory"] + 0.02, success
