"""`memstore memories export` and `import`: memories from one store (or from the miner) into
another, citations anchored, a bad file storing nothing."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

from memstore import DEFAULT_EXPIRY, AccessPolicy, Citation, FakeClock, Kind, Memory, MemoryDraft, Surface, UlidIds
from memstore.backends import StoreOptions
from memstore.backends.sqlite import SqliteStore
from memstore.cli import main
from memstore.transfer import ImportProblems, read_drafts
from memstore.verify.history import HistoryBuilder


def _run(*args: str, store: Path, ok: bool = True) -> Result:
    result = CliRunner().invoke(main, [*args, "--store", f"sqlite:///{store}", "--as", "ana"])
    if ok:
        assert result.exit_code == 0, result.output
    return result


def _listed(store: Path, repo: str = "acme/api") -> list[dict[str, object]]:
    listed: list[dict[str, object]] = json.loads(
        _run("memories", "list", "--repo", repo, "--format", "json", store=store).output
    )
    return listed


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    b = HistoryBuilder()
    b.write("settings.py", "MAX_RETRIES = 5\nTIMEOUT = 30\n")
    b.commit("one")
    return b.build(tmp_path / "code").path


def test_what_one_store_exports_another_imports_whole(tmp_path: Path, repo: Path) -> None:
    first, second = tmp_path / "a.db", tmp_path / "b.db"
    _run("memories", "add", "--repo", "acme/api", "--subject", "retries", "--fact", "MAX_RETRIES is 5",
         "--cite", "settings.py:1", "--reason", "the client retries", "--anchor", str(repo), store=first)  # fmt: skip
    out = tmp_path / "export.jsonl"
    said = _run("memories", "export", "--repo", "acme/api", "--out", str(out), store=first).output
    assert said.strip() == f"exported 1 memories of acme/api -> {out}"
    imported = _run("memories", "import", str(out), store=second).output
    assert imported.strip() == "imported 1 memories into acme/api"
    (original,), (copy,) = _listed(first), _listed(second)
    for field in ("repo", "kind", "subject", "fact", "citations", "reason"):
        assert copy[field] == original[field], field
    assert copy["citations"][0]["snippet"] == "MAX_RETRIES = 5"  # type: ignore[index]
    assert copy["id"] != original["id"]  # the receiving store gives its own ids


def test_mined_memories_import_with_their_citations_anchored_and_no_truth(tmp_path: Path, repo: Path) -> None:
    mined = tmp_path / "mined.verdicts.jsonl"
    rows = [
        {"key": "k1", "kind": "constant", "subject": "MAX_RETRIES in settings", "truth": "contradicted",
         "fact": "`MAX_RETRIES` is set to `5` in `settings.py`.", "path": "settings.py", "line": 1,
         "snippet": "MAX_RETRIES = 5", "commit": "0" * 40, "new_value": "7"},
        {"key": "k2", "kind": "default", "subject": "TIMEOUT in settings", "truth": "valid",
         "fact": "`TIMEOUT` is set to `30` in `settings.py`.", "path": "settings.py", "line": 2,
         "snippet": "TIMEOUT = 30", "commit": "0" * 40},
    ]  # fmt: skip
    mined.write_text("".join(json.dumps(r) + "\n" for r in rows))
    store = tmp_path / "s.db"
    refused = _run("memories", "import", str(mined), store=store, ok=False)
    assert refused.exit_code == 2
    assert "line 1: repo: no repository: the line names none, so give --repo OWNER/NAME" in refused.output
    args = ["memories", "import", str(mined), "--repo", "acme/api", "--anchor", str(repo)]
    skipped = _run(*args, "--dry-run", store=store).output.splitlines()
    assert skipped[0] == (
        f"warning: {mined} is a verdict benchmark: 1 of its memories are labelled false (1 contradicted) and are "
        "not imported; --include-false imports them too"
    )
    assert skipped[1].startswith("would import 1 memories into acme/api")
    done = _run(*args, "--include-false", store=store).output.splitlines()
    assert done[0] == f"warning: {mined} labels 1 of these memories false (1 contradicted): imported"
    assert done[1].startswith("imported 2 memories into acme/api (citations anchored at ")
    listed = _listed(store)
    assert sorted(m["subject"] for m in listed) == ["MAX_RETRIES in settings", "TIMEOUT in settings"]  # type: ignore[type-var]
    commits = {c["commit"] for m in listed for c in m["citations"]}  # type: ignore[attr-defined]
    assert len(commits) == 1
    assert "0" * 40 not in commits
    assert all("truth" not in json.dumps(m) and "contradicted" not in json.dumps(m) for m in listed)


def test_a_file_with_a_bad_line_stores_nothing_and_names_every_bad_line(tmp_path: Path, repo: Path) -> None:
    good = {"repo": "acme/api", "kind": "fact", "subject": "s", "fact": "f", "citations": ["settings.py:1"]}
    lines = [json.dumps(good), "not json", json.dumps({**good, "citations": ["../etc/passwd:1"]}), json.dumps(good)]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    store = tmp_path / "s.db"
    result = _run("memories", "import", str(bad), store=store, ok=False)
    assert result.exit_code == 2
    assert "nothing imported; 2 line(s) cannot be stored" in result.output
    assert "line 2: not JSON" in result.output
    assert "line 3: path: the path must not contain '..' segments" in result.output
    assert not store.exists()  # not even an empty store
    anchored = _run("memories", "import", str(tmp_path / "bad.jsonl"), "--dry-run", store=store, ok=False)
    assert anchored.exit_code == 2
    bad.write_text(json.dumps({**good, "citations": ["settings.py:9"]}) + "\n")
    beyond = _run("memories", "import", str(bad), "--anchor", str(repo), store=store, ok=False)
    assert "line 1: citations: cannot cite settings.py:9: settings.py has 2 lines" in beyond.output
    assert not store.exists()


def test_a_dry_run_checks_and_stores_nothing(tmp_path: Path) -> None:
    good = {"repo": "acme/api", "kind": "fact", "subject": "s", "fact": "f", "citations": ["settings.py:1"]}
    file = tmp_path / "one.jsonl"
    file.write_text(json.dumps(good) + "\n")
    store = tmp_path / "s.db"
    assert _run("memories", "import", str(file), "--dry-run", store=store).output.strip() == (
        "would import 1 memories into acme/api"
    )
    assert _listed(store) == []  # the store was asked whether ana may store the line, and nothing was


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=80), st.builds(json.dumps, st.dictionaries(st.text(max_size=8), st.text(max_size=8)))
        )
    )
)
def test_any_text_is_drafts_or_a_list_of_problems(lines: list[str]) -> None:
    problems: list[int] = []
    try:
        drafts = read_drafts(lines, repo="acme/api")
    except ImportProblems as exc:
        drafts, problems = [], [p.line for p in exc.problems]
    assert bool(drafts) or bool(problems) or not any(line.strip() for line in lines)
    assert all(1 <= line <= len(lines) for line in problems)
    assert all(d.repo == "acme/api" and d.subject and d.fact for d in drafts)


def _fill(path: Path, count: int, *, citation: Citation | None = None) -> list[str]:
    """A SQLite store at ``path`` with ``count`` facts of acme/api by ana, stored a minute ago in
    one transaction; their ids, newest first (as `recent()` orders them)."""
    cited = citation or Citation("settings.py", 1)
    now = datetime.now(UTC) - timedelta(minutes=1)
    ids = UlidIds(5)
    store = SqliteStore(str(path), StoreOptions(AccessPolicy(), FakeClock(now), DEFAULT_EXPIRY, ids))
    drafts = [
        MemoryDraft("acme/api", Kind.FACT, f"setting {n}", f"MAX_RETRIES is 5 ({n})", [cited], "").validated()
        for n in range(count)
    ]
    made = [Memory.from_draft(d, memory_id=ids(now), author="ana", surface=Surface.CLI, now=now) for d in drafts]
    store.insert_many(made)
    store.close()
    return [m.id for m in reversed(made)]


def test_export_writes_every_memory_past_ten_thousand(tmp_path: Path) -> None:
    store = tmp_path / "big.db"
    ids = _fill(store, 10_050)
    out = tmp_path / "all.jsonl"
    said = _run("memories", "export", "--repo", "acme/api", "--out", str(out), store=store).output
    assert said.strip() == f"exported 10050 memories of acme/api -> {out}"
    assert [json.loads(line)["id"] for line in out.read_text(encoding="utf-8").splitlines()] == ids
    printed = _run("memories", "export", "--repo", "acme/api", store=store).output.splitlines()
    assert [json.loads(line)["id"] for line in printed] == ids


def test_export_from_a_store_that_cannot_page_says_where_it_stopped(tmp_path: Path) -> None:
    store = tmp_path / "big.db"
    ids = _fill(store, 10_001)
    out = tmp_path / "all.jsonl"
    unpaged = f"mutant:identity:sqlite:///{store}"  # a store that lists one call's worth at most
    args = ["memories", "export", "--repo", "acme/api", "--out", str(out), "--as", "ana", "--store", unpaged]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert [json.loads(line)["id"] for line in out.read_text(encoding="utf-8").splitlines()] == ids[:10_000]
    assert f"stopped after 10,000 memories, at {ids[9_999]}" in result.output


def _write_lines(path: Path, *rows: object) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


GOOD = {"repo": "acme/api", "kind": "fact", "subject": "s", "fact": "f", "citations": ["settings.py:1"]}


@pytest.mark.parametrize("store_uri", ["sqlite:///{db}", "mutant:identity:sqlite:///{db}"], ids=["batch", "one-by-one"])
def test_a_permission_refusal_on_line_three_stores_nothing(tmp_path: Path, store_uri: str) -> None:
    access = tmp_path / "access.toml"
    access.write_text('[users.ana]\n"acme/api" = "admin"\n"acme/web" = "read"\n', encoding="utf-8")
    lines = _write_lines(tmp_path / "in.jsonl", GOOD, {**GOOD, "fact": "g"}, {**GOOD, "repo": "acme/web"}, GOOD)
    db = tmp_path / "s.db"
    uri = store_uri.format(db=db)

    def run(*extra: str) -> Result:
        return CliRunner().invoke(
            main, ["memories", "import", str(lines), *extra, "--store", uri, "--as", "ana", "--access", str(access)]
        )

    refusal = "line 3: 'ana' needs write access to 'acme/web' to store a repository fact"
    checked = run("--dry-run")
    if store_uri.startswith("sqlite:"):  # a store that says whether it would store a draft, without storing it
        assert checked.exit_code == 2, checked.output
        assert refusal in checked.output
    else:
        assert checked.output.strip() == (
            "would import 4 memories into acme/api, acme/web "
            "(permissions not checked: this store cannot say without storing)"
        )
    refused = run()
    assert refused.exit_code == 2, refused.output
    assert refusal in refused.output
    assert "nothing imported" in refused.output
    assert _listed(db) == []


def test_a_refusal_that_cannot_be_undone_names_what_was_stored(tmp_path: Path) -> None:
    access = tmp_path / "access.toml"
    access.write_text('[users.ana]\n"acme/api" = "write"\n', encoding="utf-8")
    lines = _write_lines(tmp_path / "in.jsonl", GOOD, {**GOOD, "repo": "acme/web"})
    db = tmp_path / "s.db"
    unbatched = f"mutant:identity:sqlite:///{db}"  # a store that stores one draft at a time
    args = ["memories", "import", str(lines), "--store", unbatched, "--as", "ana", "--access", str(access)]
    refused = CliRunner().invoke(main, args)
    assert refused.exit_code == 2, refused.output
    (kept,) = _listed(db)
    assert "line 2: 'ana' needs write access to 'acme/web' to store a repository fact" in refused.output
    assert f"1 memory stored before it could not be taken back: {kept['id']}" in refused.output


def test_a_deeply_nested_line_is_a_line_error(tmp_path: Path) -> None:
    deep = '{"repo": "acme/api", "subject": "s", "fact": ' + "[" * 100_000 + "]" * 100_000 + "}"
    lines = _write_lines(tmp_path / "in.jsonl", GOOD, deep)
    store = tmp_path / "s.db"
    result = _run("memories", "import", str(lines), store=store, ok=False)
    assert result.exit_code == 2, result.output
    assert "line 2: nested too deeply to read" in result.output
    assert not store.exists()


@pytest.mark.parametrize(
    ("field", "value", "shown"),
    [("subject", {"a": 1}, "an object"), ("fact", ["x", "y"], "a list"), ("reason", {"why": []}, "an object"),
     ("kind", ["fact"], "a list"), ("subject", 7, "a number")],
)  # fmt: skip
def test_a_text_field_that_is_not_text_is_a_line_error(tmp_path: Path, field: str, value: object, shown: str) -> None:
    lines = _write_lines(tmp_path / "in.jsonl", GOOD, {**GOOD, field: value})
    store = tmp_path / "s.db"
    result = _run("memories", "import", str(lines), store=store, ok=False)
    assert result.exit_code == 2, result.output
    assert f"line 2: {field}: must be a JSON string, not {shown}" in result.output
    assert not store.exists()


def test_a_mined_line_whose_path_is_not_text_is_a_line_error(tmp_path: Path) -> None:
    mined = {"subject": "s", "fact": "f", "path": {"p": 1}, "line": 1, "snippet": "x", "commit": "0" * 40}
    lines = _write_lines(tmp_path / "in.jsonl", mined)
    result = _run("memories", "import", str(lines), "--repo", "acme/api", store=tmp_path / "s.db", ok=False)
    assert "line 1: path: must be a JSON string, not an object" in result.output
