"""How agents word the memories that generated and mined scenarios seed: several wordings of each
kind of fact, so a verifier is measured on how memories are written, not on one sentence.

Each kind has a bank of wordings a person would write (backticks or none, the name first or the
value first, a note of where it lives or not). Which wording a memory gets is fixed by its key (a
digest, not the order memories are drawn in), so a scenario is the same from any seed's draw and
the truth labels never depend on the wording. The first wording of each bank is the sentence the
miner wrote before wordings varied; ``fixed=True`` keeps it (the template benchmark, which is
measured on those sentences and reported apart).

Every wording states a value once and no other number, so an agent that answers from a fact (the
stubs take its first number) reads the value the memory holds.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence

__all__ = ["WORDINGS", "choose", "say", "words_of"]

Wording = Callable[[dict[str, str]], str]


def _bank(*patterns: str) -> tuple[Wording, ...]:
    return tuple((lambda fields, p=p: p.format(**fields)) for p in patterns)


WORDINGS: dict[str, tuple[Wording, ...]] = {
    # mined from code (memstore.harness.scenarios.mining)
    "constant": _bank(
        "`{name}` is set to `{value}` in `{path}`.",
        "{name} holds {value} (it is defined in {path}).",
        "In {path}, `{name}` = `{value}`.",
        "The value of {name} is {value}; see `{path}`.",
        "{path} assigns {value} to `{name}`.",
    ),
    "default": _bank(
        "`{name}` defaults `{param}` to `{value}`.",
        "If you call `{name}` without `{param}`, it uses {value}.",
        "The default for {param} in {name} is {value}.",
        "`{param}` falls back to `{value}` when {name} is called without it.",
        "{name}() takes {param}={value} unless the caller passes another value.",
    ),
    "signature": _bank(
        "`{name}` takes `({value})`.",
        "{name} accepts the parameters ({value}).",
        "The parameters of `{name}` are `({value})`, in that order.",
        "Call `{name}` with ({value}).",
    ),
    "base": _bank(
        "`{name}` subclasses `{value}`.",
        "{name} inherits from {value}.",
        "`{name}` is derived from `{value}`.",
        "The base class of {name} is {value}.",
    ),
    "dependency": _bank(
        "The project requires `{name}{value}`.",
        "{name} is pinned as `{name}{value}` in the project's requirements.",
        "Installing the project needs {name}{value}.",
        "The dependency on {name} is declared as {name}{value}.",
    ),
    "definition": _bank(
        "`{name}` is defined in `{path}`.",
        "{name} lives in {path}.",
        "You will find the definition of `{name}` in `{path}`.",
        "`{path}` is where {name} is defined.",
    ),
    # claims a cited line does not make (memstore.harness.scenarios.mined_variants)
    "claim: environment": _bank(
        "`{name}` = `{value}` is read from the environment at import time.",
        "{name} is not hard-coded: it is read from an environment variable when the module loads.",
        "The value of {name} comes from the environment; {value} is only what it usually holds.",
    ),
    "claim: platform": _bank(
        "`{name}` is `{value}` only on Windows; elsewhere it is not set.",
        "{name} is only set on Windows (to {value}); other platforms leave it unset.",
        "Only Windows gets {name} = {value}.",
    ),
    "claim: deprecated": _bank(
        "`{name}` (`{value}`) is deprecated and no longer used.",
        "{name} is a leftover: deprecated, and nothing uses it any more.",
        "Nothing reads {name} now; it is deprecated.",
    ),
    "claim: ignores": _bank(
        "`{name}` ignores `{param}`: it always uses `{value}`.",
        "Passing {param} to {name} has no effect; it always works with {value}.",
        "{name} never reads its {param} argument.",
    ),
    "claim: raises": _bank(
        "`{name}` raises `ValueError` unless `{param}` is `{value}`.",
        "{name} throws a ValueError when {param} is anything but {value}.",
        "Give {name} a {param} other than {value} and it raises ValueError.",
    ),
    # generated (memstore.harness.scenarios.generated_memories)
    "setting": _bank(
        "{name} is set to {value}.",
        "The service config sets {name} to {value}.",
        "`{name}` is {value} in the service config.",
        "Expect {value} for {name}; the service config holds it.",
        "{name} = {value} (service config).",
        "The configured {words} is {value} ({name}).",
    ),
    "kept together": _bank(
        "{name} must match between the service config and {copies}.",
        "Keep {name} in sync: the service config and {copies} all carry it.",
        "If you change {name}, change it in {copies} too, or they drift from the service config.",
        "{name} is duplicated in the service config and {copies}; they must agree.",
    ),
    "kept alone": _bank(
        "{name} is kept only in the service config.",
        "Only the service config carries {name}; nothing else copies it.",
        "{name} has no copy outside the service config.",
    ),
    "enforced elsewhere": _bank(
        "{name} is enforced by the rate limiter middleware.",
        "The rate limiter middleware is what applies {name}.",
        "{name} takes effect in the rate limiter middleware, not in the config.",
    ),
    "read from the environment": _bank(
        "{name} is read from the environment.",
        "The service reads {name} from an environment variable.",
        "{name} comes from the environment at start-up.",
    ),
    "helper note": _bank(
        "{name} returns its argument unchanged ({note}).",
        "{name} is an identity function: it hands back what it is given ({note}).",
        "Calling {name} gives back its argument as it is ({note}).",
    ),
}


def choose(kind: str, key: str, *, fixed: bool = False) -> int:
    """The index of the wording a memory of ``kind`` with ``key`` gets (0 when ``fixed``)."""
    if fixed:
        return 0
    digest = int(hashlib.sha256(f"{kind}|{key}".encode()).hexdigest()[:8], 16)
    return digest % len(WORDINGS[kind])


def say(kind: str, key: str, fields: dict[str, str], *, fixed: bool = False) -> str:
    """The fact of a memory of ``kind`` worded as ``choose`` picks for its ``key``."""
    return WORDINGS[kind][choose(kind, key, fixed=fixed)](fields)


def words_of(name: str) -> str:
    """A name of code as words (``RETRY_LIMIT_3`` -> "retry limit"), numbers left out."""
    parts: Sequence[str] = [p for p in re.split(r"[_\W]+|(?<=[a-z])(?=[A-Z])", name) if p and not p.isdigit()]
    return " ".join(p.lower() for p in parts) or name
