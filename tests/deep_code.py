"""A repository holding input nested too deeply for recursive readers, and memories about it.

Three hostile shapes (issue 43, item 6), each beside an ordinary file:

- ``expr.py``: an ``if`` whose condition is a 1,200-term expression (1,200 levels of syntax);
- ``elif.py``: a 1,000-branch ``elif`` chain at the top of a module (1,000 nested ``if`` nodes);
- ``d/d/.../deep.py``: a file 1,200 folders down (an ordinary file, in a deep folder tree).

Each memory's fact makes the reference verifier read the shape the way that used to crash it: a
claim about the platform reads the condition of the ``if`` around an assignment, a claim about
the environment looks for the assignment through every branch, and "no longer used" lists every
file of the package.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memstore.verify.beneath import remove_tree
from memstore.verify.history import BuiltRepository, HistoryBuilder

__all__ = ["DEEP_FOLDER", "GOOD", "HOSTILE", "deep_repository"]

DEEP_FOLDER = "/".join(["d"] * 1200) + "/deep.py"

EXPRESSION = "import os\n\nif " + " + ".join(["os.sep"] * 1200) + ":\n    LEVEL = 1\n"
ELIF_CHAIN = "MODE = 0\nif MODE == 0:\n    X = 0\n" + "".join(
    f"elif MODE == {i}:\n    X = {i}\n" for i in range(1, 1000)
)

#: (subject, fact, citation) of the memory that cites ordinary code.
GOOD = ("Timeout", "`TIMEOUT` is 30 seconds.", "good.py:1")

#: (subject, fact, citation) of each memory about a hostile shape.
HOSTILE = {
    "expression": ("Log level", "`LEVEL` is set only on Windows.", "expr.py:4"),
    "elif": ("Mode", "`X` is read from the environment.", "elif.py:3"),
    "folders": ("Total", "`TOTAL` is deprecated and no longer used.", f"{DEEP_FOLDER}:1"),
}


@contextmanager
def deep_repository(where: Path) -> Iterator[BuiltRepository]:
    """The repository at ``where``: ``good.py`` and the three hostile shapes, in one commit.
    Removed on the way out: pytest's own clean-up of old temporary folders would recurse into it."""
    builder = HistoryBuilder()
    builder.write("good.py", "TIMEOUT = 30\n")
    builder.write("expr.py", EXPRESSION)
    builder.write("elif.py", ELIF_CHAIN)
    builder.write(DEEP_FOLDER, "TOTAL = 2\n")
    builder.commit("hostile shapes", label="initial")
    try:
        yield builder.build(where)
    finally:
        remove_tree(where)
