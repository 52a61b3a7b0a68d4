"""The README documents every command, and its examples run."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import click
import pytest

from memstore.cli import main

README = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")


def _commands(group: click.Group, prefix: str = "memstore") -> list[str]:
    found = []
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            found += _commands(command, f"{prefix} {name}")
        else:
            found.append(f"{prefix} {name}")
    return found


@pytest.mark.parametrize("command", _commands(main))
def test_every_cli_command_is_in_the_readme(command: str) -> None:
    assert f"`{command}" in README


def test_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    example = re.search(r"## Using the store from Python\n\n```python\n(.*?)```", README, re.S)
    assert example is not None
    code = example.group(1).replace("/tmp/memories.db", str(tmp_path / "memories.db"))
    script = tmp_path / "example.py"
    script.write_text(code)
    output: list[str] = []
    monkeypatch.setattr("builtins.print", lambda *args, **_: output.append(" ".join(map(str, args))))
    runpy.run_path(str(script))
    assert output[-1] == "['superseded', 'active']"
    assert "API version synchronization" in output[0]
