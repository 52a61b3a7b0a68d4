"""A task's grading data written out, for a grader that runs where memstore does not.

memstore grades a session in its own process (`trial`). A task exported to another harness (a
Harbor task: `memstore.harness.export`) is graded in that harness's verifier, after the agent's
session, by the portable grader (`portable`, the standard library alone), from a JSON document of
the task's grading data: what `expected_outcome` writes. This stage stays the only reader of
grading data; an exporter asks it for the document and never reads a label itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memstore.harness.grading import portable
from memstore.harness.scenarios import Task
from memstore.model import Surface

__all__ = ["EXPECTED_VERSION", "expected_outcome", "portable_grader"]

EXPECTED_VERSION = 1


def expected_outcome(task: Task) -> dict[str, Any]:
    """The grading data of ``task`` on its surface, as the portable grader reads it: the merge
    check (coding), the expected findings' files (review), the answer, its matcher and where it is
    read off the code (CLI). Nothing an agent is shown; nothing of the memories' labels."""
    document: dict[str, Any] = {"version": EXPECTED_VERSION, "task": task.key, "surface": task.surface.value}
    if task.surface is Surface.CODING_AGENT:
        check = task.check
        document["check"] = {
            "equal": [{"path": where.path, "pattern": where.pattern} for where in check.equal],
            "contains": [[path, text] for path, text in check.contains],
            "absent": [[path, text] for path, text in check.absent],
            "unchanged": list(check.unchanged),
            "command": list(check.command),
        }
    elif task.surface is Surface.CODE_REVIEW:
        document["findings"] = sorted({finding.path for finding in task.findings})
    else:
        where = task.answer_at
        document["answer"] = task.answer
        document["match"] = task.match.value
        document["answer_at"] = None if where is None else {"path": where.path, "pattern": where.pattern}
    return document


def portable_grader() -> str:
    """The portable grader's source (`portable`), to write beside the documents it reads."""
    return Path(portable.__file__).read_text(encoding="utf-8")
