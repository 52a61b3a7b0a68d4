"""The composition root's choices: the parts a run is made of, chosen once, here, and handed down.

pytest's runner never imports its reporters, and its one list of built-ins is one place. Here
the stages below never name what sits above them: the trial loop is handed its grading, the
sequential run its gates, the run folder's writer what the arms declared. Every part comes from
the plug-in table (`memstore.plugins`), where memstore's own are entry points of its
distribution, so a plug-in's grading or gate family is chosen the same way:

- the grading: the ``memstore.gradings`` entry named (``trial``: `memstore.harness.grading.trial`);
- the gates: every family of the ``memstore.gates`` group, memstore's own first
  (`memstore.harness.report.families`);
- the agents and stores: named by the run's config (`RunConfig.arms`; by default every stub on
  ``sqlite:``, `memstore.harness.runfolder.manifest`), made and opened once by
  `memstore.harness.run.runner.declarations.check_config`, whose `Declared` the pipeline hands on;
- the metrics: every module of the ``memstore.metrics`` group, read by the analysis stage from
  the table when the results are computed.

`memstore.harness.evaluate` calls `choose` and passes the `Parts` down.
"""

from __future__ import annotations

from dataclasses import dataclass

from memstore import plugins
from memstore.errors import ConfigurationError
from memstore.harness.report import GateFamily, every_family
from memstore.harness.run import GradingFactory
from memstore.registry import Registry

__all__ = ["GRADING", "GRADINGS", "Parts", "choose"]

GRADINGS: Registry[GradingFactory] = plugins.GRADINGS
GRADING = "trial"  # the grading a run uses unless told another: the harness's own


@dataclass(frozen=True)
class Parts:
    """The parts chosen for a run (see the module docstring).

    Attributes:
        grading: makes each trial's grading (`memstore.harness.run.play.handoff.Grading`).
        gates: the families of gates the run is held to, in order.
    """

    grading: GradingFactory
    gates: tuple[GateFamily, ...]


def choose(grading: str = GRADING) -> Parts:
    """The parts of a run: the grading named ``grading`` and every registered gate family.

    Raises:
        ConfigurationError: no grading of that name.
    """
    factory = GRADINGS.find(grading)
    if factory is None:
        raise ConfigurationError(f"unknown grading {grading!r}; known: {', '.join(GRADINGS.names())}")
    return Parts(factory, tuple(every_family()))
