"""The one place that asks git about memstore's own source."""

from __future__ import annotations

import subprocess
from pathlib import Path

import memstore
from memstore.verify.git import source_commit


def test_source_commit_is_only_for_a_checkout_of_memstore(tmp_path: Path) -> None:
    package = Path(memstore.__file__).resolve().parent
    found = source_commit(package)
    assert found is None or len(found) == 40  # a checkout gives its HEAD; an installed copy gives nothing
    repo = tmp_path / "someone-else"
    (repo / "lib" / "memstore").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "-c",
            "user.name=a",
            "-c",
            "user.email=a@b",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ],
        check=True,
    )
    assert source_commit(repo / "lib" / "memstore") is None  # an installed copy inside another repository
    assert source_commit(tmp_path) is None  # not a repository at all
