"""A name in a memory's subject that names a module is not a constant of that module (seen on
mined psf/requests): the subject "__title__ in __version__" places ``__title__`` in the file
``requests/__version__.py``, so a question about ``__version__`` is not answered with
``__title__``'s value ("requests")."""

from __future__ import annotations

from pathlib import Path

from memstore.agents import craft
from memstore.harness.grading import TrialGrading
from memstore.harness.run import RunConfig, run
from memstore.harness.run.output import Arm
from memstore.harness.scenarios import load_file

SCENARIO = """\
name: requests-version
description: requests' __version__.py holds the package's title and its version.
fixture: empty
repo: psf/requests
users:
  ana: {psf/requests: admin}
  dev: {psf/requests: write}
history:
  - commit: Add the version module
    label: version-module
    edits:
      - write:
          path: requests/__version__.py
          text: |
            __title__ = "requests"
            __description__ = "Python HTTP for Humans."
            __version__ = "2.32.3"
memories:
  - key: title
    origin: genuine
    truth: valid
    author: ana
    surface: coding_agent
    subject: __title__ in __version__
    fact: "`__title__` is set to `requests` in `requests/__version__.py`."
    citations: [requests/__version__.py:1]
    reason: Mined from the repository.
    learned_at: version-module
    age: 2d
tasks:
  - key: which-version
    surface: cli
    user: dev
    after: 1h
    prompt: What is `__version__` set to?
    intent: {ask: __version__}
    question: What is `__version__` set to?
    answer: "2.32.3"
"""


def test_the_module_a_subject_places_a_name_in_is_not_that_name() -> None:
    assert craft.subject_names("__title__ in __version__", {"__version__"}) == {craft.identifiers("__title__")}.pop()
    assert craft.subject_names("__version__ in __version__", {"__version__"}) == craft.identifiers("__version__")
    assert craft.subject_names("__title__ in __version__", {"__init__"}) == craft.identifiers("__title__ __version__")


def test_a_question_about_the_module_name_is_not_answered_with_the_constant_of_the_subject(tmp_path: Path) -> None:
    path = tmp_path / "requests-version.yaml"
    path.write_text(SCENARIO, encoding="utf-8")
    arms = tuple(Arm(agent, "memory://") for agent in ("no-memory", "trusting", "jit-verify"))
    output = run(RunConfig(scenarios=tuple(load_file(path)), arms=arms), grading=TrialGrading)
    answers = {e.agent: e.detail for e in output.events if e.kind == "answer"}
    assert answers == {"no-memory": "2.32.3", "trusting": "2.32.3", "jit-verify": "2.32.3"}
