"""Grading: the only reader of grading data (labels meet actions), after each session.

One trial's grading (`trial`: `TrialGrading`, the ``trial`` entry of the ``memstore.gradings`` group) reads
what the trial loop hands it with the scenario's labels: the agent's actions (`actions`), its answers
(`answers`), its changes' checks (`merge_checks`) and the memories' scores (`scoring`).
"""

from memstore.harness.grading.trial import TrialGrading

__all__ = ["TrialGrading"]
