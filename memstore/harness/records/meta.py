"""What a run was: ``results.json``'s ``run``, typed.

`RunMeta` is enough to rerun a run and to refuse comparing it with another kind of run; each arm
is an `ArmMeta`, with what its agent and store declared (role, simulation, parameters). It is
written as the document memstore always wrote (`RunMeta.to_json`: a key that was optional is
left out when absent) and read back from any format `upgrade` brings to the current one; keys it
does not know (``git_commit``, which older runs kept here) are kept as they were (``extra``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memstore.harness.records.rows import Role

__all__ = ["ArmMeta", "RunMeta"]


@dataclass(frozen=True)
class ArmMeta:
    """An arm as the run's metadata keeps it: its names, and what its agent and store declared."""

    name: str
    agent: str = ""
    store: str = ""
    role: Role = Role.TREATMENT
    simulated: bool = False
    verifies: bool = False
    params: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)  # more it declares (a plug-in's capability), kept

    def declares(self, capability: str) -> bool:
        """Whether the arm's agent declares ``capability`` (``verifies``, or one a plug-in's gate asks for)."""
        return self.verifies if capability == "verifies" else bool(self.extra.get(capability))

    def to_json(self) -> dict[str, Any]:
        return {
            **self.extra,
            "name": self.name,
            "agent": self.agent,
            "store": self.store,
            "role": self.role.value,
            "simulated": self.simulated,
            "verifies": self.verifies,
            "params": dict(self.params),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ArmMeta:
        return cls(
            name=str(data["name"]),
            agent=str(data.get("agent", "")),
            store=str(data.get("store", "")),
            role=Role(data.get("role", Role.TREATMENT.value)),
            simulated=bool(data.get("simulated", False)),
            verifies=bool(data.get("verifies", False)),
            params=dict(data.get("params") or {}),
            extra={k: v for k, v in data.items() if k not in _ARM_KEYS},
        )


_ARM_KEYS = ("name", "agent", "store", "role", "simulated", "verifies", "params")
_OPTIONAL = ("sample", "store_profiles", "agent_runtime", "sequential")  # written only when the run has them


@dataclass(frozen=True)
class RunMeta:
    """What a run was (see the module docstring)."""

    seed: int = 0
    trials: int = 1
    limit: int = 0
    scenario_set_hash: str = ""
    scenarios: tuple[str, ...] = ()
    tasks: int = 0
    arms: tuple[ArmMeta, ...] = ()
    stores: tuple[str, ...] = ()
    populations: Mapping[str, Any] = field(default_factory=dict)
    expiry_days: float = 0.0
    memstore_version: str = ""
    sample: str | None = None  # the sample's description (``--quick``)
    store_profiles: Mapping[str, Any] | None = None  # stores over other projects' engines: what is native
    agent_runtime: Mapping[str, Any] | None = None  # how command agents ran
    sequential: Mapping[str, Any] | None = None  # a sequential run's order, looks and intervals
    extra: Mapping[str, Any] = field(default_factory=dict)  # keys this memstore does not write, kept

    @property
    def git_commit(self) -> str | None:
        """The commit an older run ran from (runs now keep it in ``timings.json``)."""
        found = self.extra.get("git_commit")
        return found if isinstance(found, str) else None

    def arm(self, name: str) -> ArmMeta | None:
        """The arm named ``name``, if the run has it."""
        return next((a for a in self.arms if a.name == name), None)

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "seed": self.seed,
            "trials": self.trials,
            "limit": self.limit,
            "scenario_set_hash": self.scenario_set_hash,
            "scenarios": list(self.scenarios),
            "tasks": self.tasks,
            "arms": [a.to_json() for a in self.arms],
            "stores": list(self.stores),
            "populations": dict(self.populations),
            "expiry_days": self.expiry_days,
            "memstore_version": self.memstore_version,
        }
        for name in _OPTIONAL:
            value = getattr(self, name)
            if value is not None:
                document[name] = value if isinstance(value, str) else dict(value)
        return {**self.extra, **document}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunMeta:
        """A run's metadata as `to_json` wrote it (in the current format: `upgrade` an older one)."""
        known = {*cls.__dataclass_fields__} - {"extra"}
        return cls(
            seed=int(data.get("seed", 0)),
            trials=int(data.get("trials", 1)),
            limit=int(data.get("limit", 0)),
            scenario_set_hash=str(data.get("scenario_set_hash", "")),
            scenarios=tuple(data.get("scenarios", ())),
            tasks=int(data.get("tasks", 0)),
            arms=tuple(ArmMeta.from_json(a) for a in data.get("arms", ()) if isinstance(a, Mapping)),
            stores=tuple(data.get("stores", ())),
            populations=dict(data.get("populations") or {}),
            expiry_days=float(data.get("expiry_days", 0.0)),
            memstore_version=str(data.get("memstore_version", "")),
            sample=data.get("sample"),
            store_profiles=data.get("store_profiles"),
            agent_runtime=data.get("agent_runtime"),
            sequential=data.get("sequential"),
            extra={k: v for k, v in data.items() if k not in known},
        )
