"""A distribution installed for one test: a ``*.dist-info`` folder with its entry points, on ``sys.path``.

`importlib.metadata` finds it as it finds one ``pip install`` put in site-packages (its metadata
and its ``entry_points.txt``), so a plug-in is found the way a user's would be, without a venv.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

__all__ = ["install"]


def install(
    folder: Path,
    name: str,
    entry_points: Mapping[str, Mapping[str, str]],
    monkeypatch: pytest.MonkeyPatch,
    modules: Mapping[str, str] | None = None,
) -> None:
    """Install distribution ``name`` into ``folder`` (put on ``sys.path`` for the test): its
    ``entry_points`` (group -> name -> value) and its ``modules`` (module name -> source)."""
    dist = folder / f"{name.replace('-', '_')}-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    text = "".join(
        f"[{group}]\n" + "".join(f"{key} = {value}\n" for key, value in entries.items()) + "\n"
        for group, entries in entry_points.items()
    )
    (dist / "entry_points.txt").write_text(text)
    for module, source in (modules or {}).items():
        (folder / f"{module}.py").write_text(source)
    monkeypatch.syspath_prepend(str(folder))
    for module in modules or {}:  # imported afresh by the test, and forgotten after it
        monkeypatch.setitem(sys.modules, module, None)  # type: ignore[arg-type]
        monkeypatch.delitem(sys.modules, module)
