"""The stub agents' parameters: what bounds their exploration, given per agent.

An agent spec carries its parameters (``jit-verify[searches=1,reads=4]``, or ``--agent-param
NAME=VALUE`` for every agent of a run that takes parameters), so two arms may run one stub with
two budgets and a unit's identity is its arm. The defaults and their reasons are in
`memstore.agents.stubs`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from memstore.errors import ConfigurationError

__all__ = ["StubParams"]

_FLAGS = {"true": True, "1": True, "false": False, "0": False}


@dataclass(frozen=True)
class StubParams:
    """What bounds a stub's exploration: greps of the working copy, files opened, and whether
    it stores what it found."""

    searches: int = 2
    reads: int = 8
    learn: bool = True

    @classmethod
    def parse(cls, given: Mapping[str, str], *, agent: str = "the stub") -> StubParams:
        """From ``name -> value`` strings, such as ``{"searches": "1"}``.

        Raises:
            ConfigurationError: for a parameter the stubs do not take, or a value out of range.
        """
        known = [f.name for f in fields(cls)]
        values: dict[str, Any] = {}
        for name, value in given.items():
            if name not in known:
                raise ConfigurationError(
                    f"{agent}: unknown agent parameter {name!r}; known: {', '.join(sorted(known))}"
                )
            if name == "learn":
                if value.lower() not in _FLAGS:
                    raise ConfigurationError(f"{agent}: agent parameter learn is true or false, got {value!r}")
                values[name] = _FLAGS[value.lower()]
            elif value.isdigit() and 0 <= int(value) <= 100:
                values[name] = int(value)
            else:
                raise ConfigurationError(
                    f"{agent}: agent parameter {name} is a whole number from 0 to 100, got {value!r}"
                )
        return cls(**values)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
