"""Mining memories from a history: labels from the syntax trees, a scenario the harness builds,
a verdict benchmark file; and `memstore mine` as a user runs it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from memstore.cli import main
from memstore.harness.scenarios.loader import load_file
from memstore.harness.scenarios.mining import mine
from memstore.harness.world import validate_file
from memstore.verify import GitCodebase
from memstore.verify.history import HistoryBuilder

OLD_CORE = """\
MAX_RETRIES = 3
DEFAULT_TIMEOUT = 30
__version__ = "1.0.0"


class Client:
    def __init__(self, url, timeout=30, retries=3):
        self.url = url

    def get(self, path):
        return self.url + path


def connect(host, port=5432):
    return (host, port)


def legacy_helper():
    return None
"""

NEW_CORE = '''\
"""The client, moved under src/ and reformatted."""
import typing as t

MAX_RETRIES = 5
DEFAULT_TIMEOUT = 30
__version__ = "2.0.0"


class Client:
    def __init__(self, url: str, timeout: int = 30, retries: int = 3) -> None:
        self.url = url

    def get(self, path: str) -> str:
        return self.url + path


def connect(host: str, port: int = 6432) -> t.Tuple[str, int]:
    return (host, port)
'''


def _repo(tmp_path: Path) -> Path:
    b = HistoryBuilder()
    b.write("acme/core.py", OLD_CORE).write("acme/gone.py", "ENDPOINT = 'https://old.example.com'\n")
    b.write("README.md", "# acme\n")
    b.commit("1.0.0", label="v1")
    b.tag("v1.0.0")
    b.remove("acme/core.py").remove("acme/gone.py").write("src/acme/core.py", NEW_CORE)
    b.commit("2.0.0", label="v2")
    b.tag("v2.0.0")
    return b.build(tmp_path / "acme").path


def test_labels_come_from_both_syntax_trees(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    mined = mine(GitCodebase(repo, "v1.0.0"), GitCodebase(repo, "v2.0.0"), limit=100, fixed_wording=True)
    items = {m.fact: m for m in mined if m.kind != "adversarial"}
    assert {m.truth for m in mined if m.kind == "adversarial"} <= {"unsupported", "missing"}
    retries = items["`MAX_RETRIES` is set to `3` in `acme/core.py`."]
    assert (retries.truth, retries.new_value, retries.now_path) == ("contradicted", "5", "src/acme/core.py")
    timeout = items["`DEFAULT_TIMEOUT` is set to `30` in `acme/core.py`."]
    assert (timeout.truth, timeout.now_path, timeout.now_line) == ("moved", "src/acme/core.py", 5)
    assert items["`connect` defaults `port` to `5432`."].truth == "contradicted"
    assert items["`connect` defaults `port` to `5432`."].new_value == "6432"
    assert items["`Client.__init__` defaults `timeout` to `30`."].truth == "moved"  # annotated, same value
    assert items["`legacy_helper` is defined in `acme/core.py`."].truth == "contradicted"  # gone, file stayed
    assert items["`ENDPOINT` is set to `'https://old.example.com'` in `acme/gone.py`."].truth == "missing"
    assert all(m.snippet for m in items.values())


def test_memstore_mine_writes_a_scenario_the_harness_builds_and_a_benchmark_file(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    out = tmp_path / "mined" / "acme.yaml"
    result = CliRunner().invoke(
        main, ["mine", str(repo), "--from", "v1.0.0", "--to", "v2.0.0", "--name", "acme/core", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert validate_file(out) == []
    (scenario,) = load_file(out)
    assert scenario.repo == "acme/core"
    truths = {m.truth.value for m in scenario.memories}
    assert {"moved", "contradicted"} <= truths
    assert [t.surface.value for t in scenario.tasks]
    assert all(t.needs for t in scenario.tasks)
    lines = (tmp_path / "mined" / "acme.verdicts.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    assert len(rows) >= len(scenario.memories)
    assert {"truth", "path", "line", "snippet", "commit", "new_value"} <= set(rows[0])
    run = CliRunner().invoke(main, ["eval", str(out), "--agent", "jit-verify", "--out", str(tmp_path / "run")])
    assert run.exit_code in (1, 3), run.output  # a mined scenario holds memories the verifier gets wrong


def test_mine_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    bad_ref = CliRunner().invoke(main, ["mine", str(repo), "--from", "v9", "--to", "v2.0.0"])
    assert bad_ref.exit_code == 2
    assert "'v9' is not a commit" in bad_ref.output
    bad_kind = CliRunner().invoke(main, ["mine", str(repo), "--from", "v1.0.0", "--to", "v2.0.0", "--kinds", "nope"])
    assert bad_kind.exit_code == 2
    assert "--kinds: unknown nope" in bad_kind.output


def test_other_languages_give_constants_versions_and_definitions_by_pattern(tmp_path: Path) -> None:
    b = HistoryBuilder()
    b.write("package.json", '{\n  "name": "acme",\n  "version": "1.4.0"\n}\n')
    b.write("src/client.ts", 'export const API_VERSION = "v2.1.4";\n\nexport class ApiClient {\n}\n')
    b.commit("old", label="old")
    b.write("package.json", '{\n  "name": "acme",\n  "version": "1.5.0"\n}\n')
    b.write("src/client.ts", '// generated\nexport const API_VERSION = "v2.1.4";\n\nexport class ApiClient {\n}\n')
    b.commit("new")
    built = b.build(tmp_path / "ts")
    mined = mine(GitCodebase(built.path, built.commits["old"]), GitCodebase(built.path, "main"), fixed_wording=True)
    found = {m.fact: m for m in mined if m.kind != "adversarial"}
    assert found['`version` is set to `"1.4.0"` in `package.json`.'].truth == "contradicted"
    assert found['`version` is set to `"1.4.0"` in `package.json`.'].new_value == '"1.5.0"'
    assert found['`API_VERSION` is set to `"v2.1.4"` in `src/client.ts`.'].truth == "moved"
    assert found["`ApiClient` is defined in `src/client.ts`."].truth == "moved"


CHANGES = """\
Version 2.0
-----------

-   The behaviour of the base
    class was kept, and each command
    function and its helpers moved. A new
    class Registry holds every command.
"""

BLACK_FORMATTED = """\
def echo(
    message=None,
    nl: bool = True,
    err: bool = False,
    width: int = 80,
) -> None:
    pass
"""


def _prose_repo(tmp_path: Path) -> Path:
    b = HistoryBuilder()
    b.write("CHANGES.rst", CHANGES)
    b.write("docs/commands.rst", "The command\nclass and the\nfunction its_helper are defined here.\n")
    b.write("artwork/logo.svg", '<svg version="1.1" xmlns="http://www.w3.org/2000/svg"></svg>\n')
    b.write("examples/demo.py", "DEMO_LIMIT = 3\n").write("src/acme/echo.py", BLACK_FORMATTED)
    b.commit("old", label="old")
    b.write("src/acme/echo.py", BLACK_FORMATTED.replace("width: int = 80", "width: int = 100"))
    b.write("CHANGES.rst", CHANGES + "\nVersion 2.1\n")
    b.commit("new")
    return b.build(tmp_path / "prose").path


def test_code_is_mined_and_prose_assets_and_examples_only_when_asked(tmp_path: Path) -> None:
    """click 8.1.0 -> 8.2.0 once gave "`was` is defined in `CHANGES.rst`", "`and` is defined in
    `docs/commands.rst`" and a version in artwork/logo.svg: code alone by default."""
    repo = _prose_repo(tmp_path)
    before, after = GitCodebase(repo, "HEAD~1"), GitCodebase(repo, "HEAD")
    mined = [m for m in mine(before, after, limit=100, fixed_wording=True) if m.kind != "adversarial"]
    assert {m.path for m in mined} == {"src/acme/echo.py"}
    with_prose = mine(before, after, limit=100, prose=True, fixed_wording=True)
    facts = {m.fact for m in with_prose}
    assert "`Registry` is defined in `CHANGES.rst`." in facts  # a name, written as one
    named = {m.subject for m in with_prose if m.kind == "definition"}
    assert not named & {"where was lives", "where and lives", "where its_helper lives"}  # words, not names
    assert not any(m.path.endswith(".svg") for m in with_prose)  # an asset, never
    assert any(m.path == "examples/demo.py" for m in with_prose)


def test_a_default_on_its_own_line_is_cited_there_and_labelled(tmp_path: Path) -> None:
    repo = _prose_repo(tmp_path)
    mined = {
        m.fact: m for m in mine(GitCodebase(repo, "HEAD~1"), GitCodebase(repo, "HEAD"), limit=100, fixed_wording=True)
    }
    width = mined["`echo` defaults `width` to `80`."]
    assert (width.line, width.snippet.strip(), width.truth, width.new_value) == (
        5,
        "width: int = 80,",
        "contradicted",
        "100",
    )
    nl = mined["`echo` defaults `nl` to `True`."]  # flags are defaults too
    assert (nl.line, nl.truth) == (3, "valid")


def test_memstore_mine_says_what_it_read_and_why_memories_were_left_out(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    out = tmp_path / "mined" / "acme.yaml"
    result = CliRunner().invoke(
        main, ["mine", str(repo), "--from", "v1.0.0", "--to", "v2.0.0", "--name", "acme/core", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("mined ")
    assert "from 2 code and configuration files (1 documentation files left out" in lines[0]
    assert lines[1].startswith("  the verdict benchmark file holds all ")
    assert lines[2].startswith("  the scenario holds ")
    left = next(line for line in lines if "left out of the scenario" in line)
    assert "contradicted with nothing at --to to read a current value from" in left  # legacy_helper, gone
    assert "contradicted defaults (a session's answer is checked against constants only)" in left  # connect's port


OLD_HOOKS = """\
class HookRelay(object):
    pass


class _HookCaller(object):
    def __init__(self, name, hook_execute, specmodule_or_class=None):
        self.name = name

    def call_extra(self, methods, kwargs):
        return methods


def parse(instring, parseAll=False):
    return instring


MAX_DEPTH = 7
"""

NEW_HOOKS = """\
class _HookRelay(HookRelayBase):
    pass


class HookCaller:
    def __init__(self, name, hook_execute, specmodule_or_class=None, spec_opts=None):
        self.name = name

    def call_extra(self, methods, kwargs):
        return methods


_HookCaller = HookCaller


def parse(instring, parse_all=False):
    return instring


MAXIMUM_DEPTH = 7
"""


def test_renames_bases_and_signatures_are_labelled_from_the_trees(tmp_path: Path) -> None:
    """A parameter, a constant and a class renamed (an alias left for the old name) are contradicted
    with the new name; a changed signature or base with the new value; pins read from pyproject."""
    b = HistoryBuilder()
    b.write("hooks/core.py", OLD_HOOKS).write("pyproject.toml", '[project]\ndependencies = [\n    "attrs>=19",\n]\n')
    b.commit("1", label="a")
    b.write("hooks/core.py", NEW_HOOKS).write("pyproject.toml", '[project]\ndependencies = [\n    "attrs>=22.1",\n]\n')
    b.commit("2", label="b")
    built = b.build(tmp_path / "r", bare=True)
    kinds = ["constant", "default", "definition", "signature", "base", "dependency"]
    mined = mine(
        GitCodebase(built.path, built.commits["a"]),
        GitCodebase(built.path, built.commits["b"]),
        kinds=kinds,
        fixed_wording=True,
    )
    said = {m.fact: (m.truth, m.sort, m.old_value, m.new_value) for m in mined}
    renamed = ("contradicted", "renamed")
    assert said["`parse` defaults `parseAll` to `False`."] == (*renamed, "parseAll", "parse_all")
    assert said["`MAX_DEPTH` is set to `7` in `hooks/core.py`."] == (*renamed, "MAX_DEPTH", "MAXIMUM_DEPTH")
    assert said["`_HookCaller` is defined in `hooks/core.py`."] == (*renamed, "_HookCaller", "HookCaller")
    assert said["`HookRelay` subclasses `object`."] == ("contradicted", "", "object", None)  # renamed away, no alias
    assert said["`_HookCaller.__init__` takes `(name, hook_execute, specmodule_or_class)`."][0] == "contradicted"
    assert said["The project requires `attrs>=19`."] == ("contradicted", "", ">=19", ">=22.1")


def test_near_misses_and_claims_the_line_does_not_make_are_written_from_true_memories(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    kinds = ["constant", "default", "definition", "near-miss", "literal"]
    mined = mine(
        GitCodebase(repo, "v1.0.0"), GitCodebase(repo, "v2.0.0"), kinds=kinds, limit=60, seed=3, fixed_wording=True
    )
    near = [m for m in mined if m.sort == "near-miss"]
    literal = [m for m in mined if m.sort == "literal"]
    assert near
    assert literal
    for item in near:
        source = next(m for m in mined if m.key == item.key.removeprefix("near-"))
        assert (item.truth, item.new_value, item.origin) == ("contradicted", source.old_value, "adversarial")
        assert item.old_value != source.old_value
        assert (item.path, item.line, item.snippet) == (source.path, source.line, source.snippet)  # the citation stands
    assert {m.truth for m in literal} == {"unsupported"}
    assert all(f"`{m.old_value}`" in m.fact for m in literal)  # the line's own literal, quoted


def test_memories_are_worded_as_agents_word_them_and_labelled_the_same(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    before, after = GitCodebase(repo, "v1.0.0"), GitCodebase(repo, "v2.0.0")
    varied = mine(before, after, limit=100, seed=3)
    fixed = {m.key: m for m in mine(before, after, limit=100, seed=3, fixed_wording=True)}
    shapes = {
        m.fact.replace(m.name, "NAME").replace(m.old_value or "\0", "VALUE") for m in varied if m.kind == "constant"
    }
    assert len(shapes) >= 2  # not one sentence per kind
    for m in varied:
        twin = fixed.get(m.key)
        if twin is not None:  # the wording changes nothing else: not the label, the value or the citation
            assert (m.truth, m.old_value, m.new_value, m.path, m.line) == (
                twin.truth,
                twin.old_value,
                twin.new_value,
                twin.path,
                twin.line,
            )
            assert m.sort == "literal" or m.old_value is None or m.old_value.strip("`'\"") in m.fact.replace("`", "")
