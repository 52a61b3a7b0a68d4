"""Grading: the only reader of grading data (labels meet actions), after each session.

One trial's grading (`trial`: `TrialGrading`, the ``trial`` entry of the ``memstore.gradings`` group) reads
what the trial loop hands it with the scenario's labels: the agent's actions (`actions`), its answers
(`answers`), its changes' checks (`merge_checks`) and the memories' scores (`scoring`). A task graded
elsewhere (an exported task's verifier) gets its grading data as a document (`expected`) and a grader
on the standard library alone that grades as this stage does (`portable`).
"""

from memstore.harness.grading.expected import EXPECTED_VERSION, expected_outcome, portable_grader
from memstore.harness.grading.trial import TrialGrading

__all__ = ["EXPECTED_VERSION", "TrialGrading", "expected_outcome", "portable_grader"]
