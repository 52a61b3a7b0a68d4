"""What a fact states of a piece of code, when it says it in a shape the verifier can check
exactly: a name's value, a parameter's default, a function's parameters, a class's bases, a
pinned requirement. Each `Stated` names the code (``MAX_RETRIES``, ``Client.send``), what about
it, the value the fact gives, and the text of the fact to replace in a correction.

The shapes are the ways agents write such facts (``MAX`` is set to ``5``; ``connect`` defaults
``timeout`` to ``30``; ``send`` takes ``(request, stream)``; ``Client`` subclasses ``Base``;
the project requires ``click>=8.0``), each with code spans around the names and the value; a
fact in other words is judged by its literal claims instead (`memstore.verify.claims`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Stated", "What", "stated"]


class What(StrEnum):
    VALUE = "value"  # a constant's or an attribute's value
    DEFAULT = "default"  # a parameter's default
    PARAMETERS = "parameters"  # a function's parameters, in order
    BASES = "bases"  # a class's bases
    REQUIREMENT = "requirement"  # a pinned dependency's version specifier


@dataclass(frozen=True)
class Stated:
    """One thing a fact states of code.

    Attributes:
        what: what is stated.
        name: the code it is stated of (a function for a default or parameters, a class for bases,
            a project for a requirement).
        param: the parameter, for a default.
        value: the value stated, as the fact writes it.
        span: the fact's text that states the value (replaced in a correction).
    """

    what: What
    name: str
    param: str | None
    value: str
    span: str


_NAME = r"`(?P<name>[A-Za-z_][\w.]*)`"
_SPAN = r"(?P<span>`(?P<value>[^`\n]+)`)"
_DEFAULT = _NAME + r"(?:'s)? defaults `(?P<param>\*{0,2}[A-Za-z_]\w*)` to " + _SPAN
_DEFAULT_OF = r"`(?P<param>[A-Za-z_]\w*)` (?:of|in) " + _NAME + r" defaults to " + _SPAN
_PARAMETERS = _NAME + r" (?:takes|accepts) (?P<span>`\((?P<value>[^`\n]*)\)`)"
_BASES = _NAME + r" (?:subclasses|inherits from|extends|derives from) " + _SPAN
_PIN = r"(?:[<>=!~]=?|===)"
_REQUIREMENT = (
    r"\brequires (?P<span>`(?P<name>[A-Za-z0-9][\w.-]*)(?:\[[\w,\s-]+\])?\s*(?P<value>" + _PIN + r"[^`\n]+)`)"
)
# a value, then the end of the clause: "`MAX` is `5`." / "is set to `5` in `a.py`" / "is `5` (...)"
_VALUE = _NAME + r" (?:is set to|is|equals|=|holds) " + _SPAN + r"(?=\s*(?:[.;,)]|$| in `| \(| by | at ))"
_SHAPES: tuple[tuple[What, re.Pattern[str]], ...] = (
    (What.DEFAULT, re.compile(_DEFAULT)),
    (What.DEFAULT, re.compile(_DEFAULT_OF)),
    (What.PARAMETERS, re.compile(_PARAMETERS)),
    (What.BASES, re.compile(_BASES)),
    (What.REQUIREMENT, re.compile(_REQUIREMENT)),
    (What.VALUE, re.compile(_VALUE)),
)


def stated(fact: str) -> list[Stated]:
    """What ``fact`` states of code, in the shapes the module docstring lists (none: [])."""
    found: list[Stated] = []
    taken: list[tuple[int, int]] = []
    for what, shape in _SHAPES:
        for match in shape.finditer(fact):
            if any(match.start() < end and start < match.end() for start, end in taken):
                continue  # a span read as one shape is not read again as another
            taken.append(match.span())
            groups = match.groupdict()
            found.append(Stated(what, groups["name"], groups.get("param"), groups["value"].strip(), groups["span"]))
    return found
