"""Names renamed between two versions of a file, read off their syntax trees (what the miner
labels a renamed identifier: a memory that names the old name is contradicted, and a correction
must name the new one)."""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from memstore.harness.scenarios.mined_facts import Fact

__all__ = ["literal_value", "renamed_as", "renamed_part"]


def literal_value(text: str) -> object:
    """A literal's value (``0xcafebabe`` and ``0xCAFEBABE``, ``'a'`` and ``"a"`` are one value)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


def renamed_as(fact: Fact, now: Sequence[Fact], was: Sequence[Fact]) -> Fact | None:
    """What a name gone at --to was renamed to, by the syntax trees of the same file, or None when
    nothing shows a rename (it was removed, or the trees cannot tell):

    - the name an alias left behind points to (``OLD = NEW``);
    - for a definition, the one definition of a name new at --to in its place (between the same
      neighbours that stayed, under the same owner) with the same parameters (or bases) and either
      the same body or a name sharing a word with the old one (``_is_setup_finished`` and
      ``_check_setup_finished``);
    - for a constant, the one constant of a new name in its place holding its value;
    - for a default, the one parameter its function gained, holding the default it had.
    """
    if fact.kind == "default":  # a parameter renamed: the one new parameter of its function with its default
        params_then = {f.param for f in was if f.kind == "default" and f.name == fact.name}
        new = [f for f in now if f.kind == "default" and f.name == fact.name and f.param not in params_then]
        same = [f for f in new if literal_value(f.value or "") == literal_value(fact.value or "")]
        return same[0] if len(same) == 1 and len(new) == 1 else None
    if fact.kind not in {"definition", "constant"}:
        return None
    owner = fact.name.rpartition(".")[0]
    alias = next((f for f in now if f.kind == "alias" and f.name == fact.name and f.value), None)
    if alias is not None and fact.kind == "definition":
        found = [
            f for f in now if f.kind == "definition" and f.name == (f"{owner}.{alias.value}" if owner else alias.value)
        ]
        return found[0] if len(found) == 1 else None
    names_then = {f.name for f in was}
    place = _place(fact, was, now)
    if place is None:
        return None
    new = [
        f
        for f in now
        if f.kind == fact.kind
        and f.name not in names_then
        and f.name.rpartition(".")[0] == owner
        and place[0] < f.line < place[1]
    ]
    if fact.kind == "constant":
        same = [f for f in new if literal_value(f.value or "") == literal_value(fact.value or "")]
        return same[0] if len(same) == 1 else None
    same = [f for f in new if f.shape == fact.shape and (f.body == fact.body or _share_a_word(f.name, fact.name))]
    return same[0] if len(same) == 1 else None


def _place(fact: Fact, was: Sequence[Fact], now: Sequence[Fact]) -> tuple[int, int] | None:
    """The lines at --to between which ``fact`` stood: the nearest definitions (or constants)
    before and after it at --from that are still there; None when it cannot be placed."""
    kinds = {"definition", "constant"}
    then = sorted((f for f in was if f.kind in kinds), key=lambda f: f.line)
    where = {f.name: f.line for f in now if f.kind in kinds}
    index = next((i for i, f in enumerate(then) if f.name == fact.name and f.kind == fact.kind), None)
    if index is None:
        return None
    before = next((where[f.name] for f in reversed(then[:index]) if f.name in where), 0)
    after = next((where[f.name] for f in then[index + 1 :] if f.name in where), 10**9)
    return (before, after) if before < after else None


def _share_a_word(one: str, other: str) -> bool:
    def parts(name: str) -> set[str]:
        last = name.rpartition(".")[2]
        return {w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", last) if len(w) >= 3}

    return bool(parts(one) & parts(other))


def renamed_part(fact: Fact) -> str | None:
    """The name a rename changed: a default's parameter, else the definition or constant itself."""
    return fact.param if fact.kind == "default" else fact.name
