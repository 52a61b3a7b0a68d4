"""The repository the MCP server tests serve: a small git repository with one constant."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.mcpserver.test_server import CONSTANTS, _git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "api"
    (repo / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "src" / "constants.ts").write_text(CONSTANTS)
    (repo / "README.md").write_text("# api\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "api")
    return repo
