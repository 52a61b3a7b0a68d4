"""What an instruction found in a memory is: its kind and where it stands (`memstore.verify.instructions`
finds them)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Instruction", "InstructionKind"]


class InstructionKind(StrEnum):
    """What an instruction would have the reader do."""

    OVERRIDE = "override"  # ignore the task or previous instructions; a forged role; keep it from the user
    PIPE_TO_SHELL = "pipe-to-shell"  # what a command prints run as a program: curl ... | sh
    FETCH = "fetch"  # fetch, open, install or run what a URL serves
    DESTRUCTIVE = "destructive"  # delete, wipe, force-push, change permissions, run as root
    EXFILTRATE = "exfiltrate"  # send, print or export secrets; send anything to a URL or an address
    DISABLE = "disable"  # turn off tests, CI, hooks, verification, review
    HIDDEN = "hidden"  # invisible characters: zero-width, bidirectional controls, tag characters


@dataclass(frozen=True)
class Instruction:
    """One instruction to the reader found in a memory.

    Attributes:
        kind: what it would have the reader do.
        text: the text found: ``text == value[start:end]`` of the field it is in.
        start: where it starts in the field.
        end: where it ends in the field.
        field: the memory's field it is in: ``subject``, ``fact`` or ``reason``.
    """

    kind: InstructionKind
    text: str
    start: int
    end: int
    field: str = "fact"

    def __str__(self) -> str:
        shown = self.text if len(self.text) <= 80 else self.text[:77] + "..."
        return f"{self.kind.value} in the {self.field}: {shown!r}"
