"""What a run's analysis produces, as values: rates with their counts, each arm's metrics, the
run's description, its comparisons and results; serialized to and from ``results.json``.

The JSON layout (format `memstore.harness.records.FORMAT`; older ones are read through
`memstore.harness.records`): ``{"format": N, "run": {...}, "arms": {ARM: {"agent", "store", "role", "overall",
"per_scenario", "per_origin", "per_group"}}, "comparisons": [...], "groups": [...]}``, a rate
as ``{"value", "k", "n"}``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from typing import Any

from memstore.harness.records import FORMAT, Role, RunMeta

__all__ = [
    "ArmResult",
    "Comparison",
    "ComparisonVerdict",
    "Rate",
    "Role",
    "RunResults",
    "Value",
    "value_from_json",
    "value_to_json",
]


class ComparisonVerdict(StrEnum):
    """What a comparison says, after Holm's adjustment."""

    IMPROVED = "improved"
    REGRESSED = "regressed"
    NO_CHANGE = "no significant change"
    UNDERPOWERED = "underpowered"  # the effect that matters could not have been seen
    PENDING = ""  # not adjusted yet


@dataclass(frozen=True)
class Comparison:
    """One metric of arm ``a`` against arm (or run) ``b``."""

    metric: str
    a: str
    b: str
    method: str
    a_value: float
    b_value: float
    diff: float
    low: float
    high: float
    p_value: float
    n: int
    p_adjusted: float = 1.0
    verdict: ComparisonVerdict = ComparisonVerdict.PENDING
    mde: float | None = None
    needed_n: float | None = None
    group: str = ""  # a comparison within one group of tasks (a kind of scenario, a stratum); "" for all
    family: str = ""  # the comparisons Holm adjusted it with (`memstore.harness.analysis.compare.FAMILIES`)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: six significant digits (a p-value of 1e-35 stays 1e-35), infinities as None."""

        def clean(value: Any) -> Any:
            if isinstance(value, float):
                return float(f"{value:.6g}") if math.isfinite(value) else None
            return value

        return {k: clean(v.value if isinstance(v, ComparisonVerdict) else v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Comparison:
        """A comparison as results.json holds it (a None interval or effect read back as infinite)."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        for name in ("diff", "low", "high", "a_value", "b_value", "p_value", "p_adjusted"):
            if values.get(name) is None and name in values:
                values[name] = math.nan
        values["verdict"] = ComparisonVerdict(values.get("verdict", ""))
        return cls(**values)

    @property
    def worse(self) -> bool:
        return self.verdict is ComparisonVerdict.REGRESSED


@dataclass(frozen=True)
class Rate:
    """A rate with its numerator and denominator, so statistics can put intervals on it."""

    k: int
    n: int

    def __post_init__(self) -> None:
        if self.n <= 0 or not 0 <= self.k <= self.n:
            raise ValueError(f"a rate needs 0 <= k <= n and n > 0, got {self.k}/{self.n}")

    @property
    def value(self) -> float:
        return round(self.k / self.n, 6)

    def __str__(self) -> str:
        return f"{self.value:.3f} ({self.k}/{self.n})"


Value = Rate | int | float | None  # a metric's value: a rate, a count, a mean, or nothing to count


def value_to_json(value: Value) -> Any:
    return {"value": value.value, "k": value.k, "n": value.n} if isinstance(value, Rate) else value


def value_from_json(data: Any) -> Value:
    if isinstance(data, dict):
        return Rate(int(data["k"]), int(data["n"]))
    return data  # type: ignore[no-any-return]


Metrics = Mapping[str, Value]


def _metrics_to_json(found: Metrics) -> dict[str, Any]:
    return {name: value_to_json(v) for name, v in found.items()}


def _metrics_from_json(data: Mapping[str, Any]) -> dict[str, Value]:
    return {name: value_from_json(v) for name, v in data.items()}


@dataclass(frozen=True)
class ArmResult:
    """One arm's metrics: overall, per scenario, per memory origin, and per group of tasks (each
    kind of scenario and each stratum of discoverability: `memstore.harness.analysis.pairs.task_groups`)."""

    agent: str
    store: str
    role: Role
    overall: Metrics
    per_scenario: Mapping[str, Metrics] = field(default_factory=dict)
    per_origin: Mapping[str, Metrics] = field(default_factory=dict)
    per_group: Mapping[str, Metrics] = field(default_factory=dict)  # per kind of scenario and per stratum
    errors: tuple[tuple[str, int], ...] = ()  # the first distinct agent errors, each with its sessions
    infra_errors: tuple[tuple[str, int], ...] = ()  # the first distinct infrastructure errors, alike

    def rate(self, name: str) -> Rate | None:
        """The overall rate ``name``, or None when it counted nothing."""
        found = self.overall.get(name)
        return found if isinstance(found, Rate) else None

    def count(self, name: str) -> int:
        found = self.overall.get(name)
        return int(found) if isinstance(found, int | float) else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "store": self.store,
            "role": self.role.value,
            "overall": _metrics_to_json(self.overall),
            "per_scenario": {k: _metrics_to_json(v) for k, v in self.per_scenario.items()},
            "per_origin": {k: _metrics_to_json(v) for k, v in self.per_origin.items()},
            "per_group": {k: _metrics_to_json(v) for k, v in self.per_group.items()},
            **({"errors": [{"message": m, "sessions": n} for m, n in self.errors]} if self.errors else {}),
            **(
                {"infra_errors": [{"message": m, "sessions": n} for m, n in self.infra_errors]}
                if self.infra_errors
                else {}
            ),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ArmResult:
        return cls(
            agent=str(data.get("agent", "")),
            store=str(data.get("store", "")),
            role=Role(data["role"]),
            overall=_metrics_from_json(data.get("overall", {})),
            per_scenario={k: _metrics_from_json(v) for k, v in data.get("per_scenario", {}).items()},
            per_origin={k: _metrics_from_json(v) for k, v in data.get("per_origin", {}).items()},
            per_group={k: _metrics_from_json(v) for k, v in data.get("per_group", {}).items()},
            errors=tuple((str(e["message"]), int(e["sessions"])) for e in data.get("errors", [])),
            infra_errors=tuple((str(e["message"]), int(e["sessions"])) for e in data.get("infra_errors", [])),
        )


@dataclass(frozen=True)
class RunResults:
    """A run's results: what it was (``run``), each arm's metrics, and the paired comparisons."""

    run: RunMeta
    arms: Mapping[str, ArmResult]
    comparisons: tuple[Comparison, ...] = ()
    groups: tuple[Comparison, ...] = ()  # task success against the control within each group of tasks
    confusion: Mapping[str, Mapping[str, Mapping[str, int]]] = field(default_factory=dict)  # arm -> origin -> counts
    healing: Mapping[str, list[float]] = field(default_factory=dict)  # arm -> share healed after each session

    def arms_of(self, role: Role) -> list[str]:
        """The names of the arms with ``role``."""
        return [name for name, arm in self.arms.items() if arm.role is role]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "run": self.run.to_json(),
            "arms": {name: arm.to_json() for name, arm in self.arms.items()},
            "comparisons": [c.to_dict() for c in self.comparisons],
            "groups": [c.to_dict() for c in self.groups],
            "confusion": {arm: dict(origins) for arm, origins in self.confusion.items()},
            "healing": dict(self.healing),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunResults:
        return cls(
            run=RunMeta.from_json(data["run"]),
            arms={name: ArmResult.from_json(arm) for name, arm in data["arms"].items()},
            comparisons=tuple(Comparison.from_dict(c) for c in data.get("comparisons", [])),
            groups=tuple(Comparison.from_dict(c) for c in data.get("groups", [])),
            confusion=dict(data.get("confusion", {})),
            healing={arm: [float(v) for v in curve] for arm, curve in data.get("healing", {}).items()},
        )
