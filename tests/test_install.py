"""What installs what: the distribution is ``agent-memstore`` (``memstore`` on PyPI is another
project); ``.[dev]`` (the README's set-up) leaves the heavy third-party stores and Ray out, and
their tests skip saying which extra to install, where CI (``.[all]``) fails such a skip."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from memstore.registry import DISTRIBUTION
from tests import extras

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\[<>=!~ ;]", r, maxsplit=1)[0].lower() for r in requirements}


def test_the_distribution_is_ours_and_the_docs_install_it_by_that_name() -> None:
    assert PROJECT["name"] == DISTRIBUTION == "agent-memstore"
    assert PROJECT["scripts"] == {"memstore": "memstore.cli:main"}  # the command keeps its name
    pages = [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
    said = [line for page in pages for line in page.read_text(encoding="utf-8").splitlines()]
    assert not [line for line in said if re.search(r"pip install ['\"]?memstore\b", line)]


def test_dev_leaves_the_heavy_extras_out_and_ci_installs_them() -> None:
    extra = PROJECT["optional-dependencies"]
    assert _names(extra["dev"]) & {"mem0ai", "ray", "qdrant-client"} == set()
    assert extra["all"] == ["agent-memstore[bettermemory,dev,facto,inspect,mem0,otel,ray,repo-memory]"]
    assert "pip install --quiet -e '.[all]'" in (ROOT / ".ci" / "run").read_text()


def test_a_missing_extra_skips_saying_which_and_fails_where_ci_requires_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(extras.EXTRAS, "no_such_module_xyz", "mem0")
    monkeypatch.delenv("MEMSTORE_REQUIRE_THIRD_PARTY", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"needs the 'mem0' extra \(no_such_module_xyz is not installed\)"):
        extras.need("no_such_module_xyz")
    monkeypatch.setenv("MEMSTORE_REQUIRE_THIRD_PARTY", "1")
    with pytest.raises(pytest.fail.Exception, match=re.escape("pip install -e '.[mem0]'")):
        extras.need("no_such_module_xyz")
