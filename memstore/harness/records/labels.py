"""What the grading knows of a seeded memory, as the rows keep it.

`Origin` is where a seeded memory came from and `Truth` what it is at the evaluation ref: the
scenarios declare both (`memstore.harness.scenarios`), and the events table writes them beside
each event, so they are the spine's. `Label` is an event's label in force when its session began:
the seeded memory's truth, or ``lapsed`` once the trial's own merges changed what it cites.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Label", "Origin", "Truth"]


class Origin(StrEnum):
    """Where a seeded memory came from."""

    GENUINE = "genuine"
    STALE = "stale"
    ADVERSARIAL = "adversarial"
    ABANDONED = "abandoned"  # learned on a branch that was never merged


class Truth(StrEnum):
    """What a seeded memory is at the evaluation ref. Usable = valid | moved."""

    VALID = "valid"
    MOVED = "moved"
    CONTRADICTED = "contradicted"
    UNSUPPORTED = "unsupported"
    MISSING = "missing"

    @property
    def usable(self) -> bool:
        return self in {Truth.VALID, Truth.MOVED}


class Label(StrEnum):
    """An event's label in force: its seeded memory's `Truth`, or `LAPSED` (neither usable nor bad:
    the trial's own merges changed what the memory cites, so its seeded truth no longer says)."""

    VALID = "valid"
    MOVED = "moved"
    CONTRADICTED = "contradicted"
    UNSUPPORTED = "unsupported"
    MISSING = "missing"
    LAPSED = "lapsed"

    @classmethod
    def of(cls, truth: Truth) -> Label:
        """The label a memory of ``truth`` carries while its label is in force."""
        return cls(truth.value)

    @property
    def usable(self) -> bool:
        return self in {Label.VALID, Label.MOVED}

    @property
    def bad(self) -> bool:
        return self in {Label.CONTRADICTED, Label.UNSUPPORTED, Label.MISSING}
