"""What a run's analysis produces, as values: rates with their counts, each arm's metrics, the
run's description, its comparisons and results; serialized to and from ``results.json``.

The JSON layout: ``{"run": {...}, "arms": {ARM: {"agent", "store", "role", "overall",
"per_scenario", "per_origin", "per_group"}}, "comparisons": [...], "groups": [...]}``, a rate
as ``{"value", "k", "n"}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

__all__ = ["ArmResult", "Rate", "Role", "RunResults", "Value", "value_from_json", "value_to_json"]


class Role(StrEnum):
    """What an arm is in a run, declared by its agent and its store (never guessed from names)."""

    CONTROL = "control"  # the agent without memory: every other arm is paired with it
    TREATMENT = "treatment"  # an agent with memory, under evaluation
    HARM_PROBE = "harm-probe"  # an agent that trusts memory as stored: it shows what bad memory does
    NEGATIVE_CONTROL = "negative-control"  # a store built to break the rules: it shows the checks catch it


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
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ArmResult:
        return cls(
            agent=str(data.get("agent", "")),
            store=str(data.get("store", "")),
            role=Role(data["role"]) if "role" in data else _guessed_role(data),
            overall=_metrics_from_json(data.get("overall", {})),
            per_scenario={k: _metrics_from_json(v) for k, v in data.get("per_scenario", {}).items()},
            per_origin={k: _metrics_from_json(v) for k, v in data.get("per_origin", {}).items()},
            per_group={k: _metrics_from_json(v) for k, v in data.get("per_group", {}).items()},
            errors=tuple((str(e["message"]), int(e["sessions"])) for e in data.get("errors", [])),
        )


def _guessed_role(data: Mapping[str, Any]) -> Role:
    """The role of an arm in a results file written before roles were recorded."""
    if data.get("store") == "naive":
        return Role.NEGATIVE_CONTROL
    return {"no-memory": Role.CONTROL, "trusting": Role.HARM_PROBE}.get(str(data.get("agent")), Role.TREATMENT)


@dataclass(frozen=True)
class RunResults:
    """A run's results: what it was (``run``), each arm's metrics, and the paired comparisons."""

    run: Mapping[str, Any]
    arms: Mapping[str, ArmResult]
    comparisons: tuple[Any, ...] = ()  # `memstore.harness.analysis.compare.Comparison`
    groups: tuple[Any, ...] = ()  # task success against the control within each group of tasks

    def arms_of(self, role: Role) -> list[str]:
        """The names of the arms with ``role``."""
        return [name for name, arm in self.arms.items() if arm.role is role]

    def to_json(self) -> dict[str, Any]:
        return {
            "run": dict(self.run),
            "arms": {name: arm.to_json() for name, arm in self.arms.items()},
            "comparisons": [c.to_dict() for c in self.comparisons],
            "groups": [c.to_dict() for c in self.groups],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunResults:
        from memstore.harness.analysis.compare import Comparison

        return cls(
            run=dict(data["run"]),
            arms={name: ArmResult.from_json(arm) for name, arm in data["arms"].items()},
            comparisons=tuple(Comparison.from_dict(c) for c in data.get("comparisons", [])),
            groups=tuple(Comparison.from_dict(c) for c in data.get("groups", [])),
        )


def as_dict(value: Any) -> dict[str, Any]:
    """A dataclass as a plain dict (for JSON)."""
    return asdict(value)
