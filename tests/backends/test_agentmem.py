"""agent-mem's layout and injected index, by the rules of the seed."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memstore import Access, AccessPolicy, Actor, FakeClock, Kind, MemoryDraft, Surface, open_store
from memstore.backends.agentmem import encode_key, render_index, resolve_memdir, strip_comments


def test_encode_key_replaces_slashes() -> None:
    assert encode_key("/Users/foo/work/api") == "-Users-foo-work-api"


def _repo(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(path),
            "-c",
            "user.name=a",
            "-c",
            "user.email=a@x",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "init",
        ],
        check=True,
    )
    return path


def test_resolve_memdir_inside_a_repository_uses_its_root(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "api")
    (repo / "src").mkdir()
    env = {"HOME": str(tmp_path / "home")}
    assert resolve_memdir(repo / "src", env) == tmp_path / "home" / ".agent-mem" / encode_key(repo)


def test_worktrees_share_a_key(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "api")
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", str(tmp_path / "wt")], check=True)
    env = {"AGENT_MEM_DIR": str(tmp_path / "mem")}
    assert resolve_memdir(tmp_path / "wt", env) == resolve_memdir(repo, env) == tmp_path / "mem" / encode_key(repo)


def test_outside_a_repository_the_directory_is_encoded(tmp_path: Path) -> None:
    plain = tmp_path / "notes"
    plain.mkdir()
    assert resolve_memdir(plain, {"AGENT_MEM_DIR": "/base"}) == Path("/base") / encode_key(plain)


def test_key_override(tmp_path: Path) -> None:
    assert resolve_memdir(tmp_path, {"AGENT_MEM_DIR": "/base", "AGENT_MEM_KEY": "my-project"}) == Path(
        "/base/my-project"
    )


def test_resolving_and_rendering_never_create_the_directory(tmp_path: Path) -> None:
    memdir = resolve_memdir(tmp_path, {"AGENT_MEM_DIR": str(tmp_path / "mem")})
    text = render_index(memdir)
    assert not (tmp_path / "mem").exists()
    assert text.startswith(f"Memory directory: {memdir}\n")
    assert "does not exist yet" in text


def test_comments_are_stripped_except_in_fenced_code() -> None:
    text = (
        "keep\n<!-- maintainer note -->\nline <!-- inline --> end\n"
        "```\n<!-- code comment -->\n```\n<!--\nmulti\n-->\nlast\n"
    )
    assert strip_comments(text) == "keep\nline  end\n```\n<!-- code comment -->\n```\nlast\n"


def test_index_caps_memory_md_at_200_lines(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("".join(f"line {n}\n" for n in range(1, 301)))
    text = render_index(tmp_path)
    assert "line 200\n" in text
    assert "line 201" not in text
    assert "(truncated" in text


def test_index_caps_memory_md_at_25_kb(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("x" * 1000 + "\n" + ("y" * 30_000) + "\n")
    text = render_index(tmp_path)
    body = text.split("## MEMORY.md\n\n", 1)[1].split("\n(truncated", 1)[0]
    assert len(body.encode()) <= 25 * 1024


def test_topic_files_are_listed_with_previews_capped_at_50(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("# Index\n")
    for n in range(60):
        (tmp_path / f"topic{n:02d}.md").write_text(f"<!-- hidden -->\n# Topic {n} " + "z" * 200 + "\n")
    text = render_index(tmp_path)
    entries = [line for line in text.splitlines() if line.startswith("- topic")]
    assert len(entries) == 50
    assert entries[0].startswith("- topic00.md: Topic 0 zzz")
    assert len(entries[0].split(": ", 1)[1]) == 100
    assert text.rstrip().endswith("- …10 more")


def test_memories_are_markdown_a_person_can_edit(tmp_path: Path) -> None:
    policy = AccessPolicy().grant("ana", "*", Access.WRITE)
    store = open_store(f"agentmem:///{tmp_path}", access=policy, clock=FakeClock())
    memory = store.store(
        MemoryDraft(
            "acme/api",
            Kind.FACT,
            "API version synchronization",
            "API version must match.",
            ["src/a.ts:12"],
            "Drift breaks clients.",
        ),
        actor=Actor("ana"),
        surface=Surface.CODE_REVIEW,
    )
    memdir = tmp_path / "-acme-api"
    topic = next(p for p in memdir.glob("*.md") if p.name != "MEMORY.md")
    text = topic.read_text()
    assert text.startswith("# API version synchronization\n\nAPI version must match.\n\nWhy: Drift breaks clients.")
    assert "- src/a.ts:12\n" in text
    topic.write_text(text.replace("API version must match.", "API version must match in three places."))
    assert store.get(memory.id, actor=Actor("ana")).fact == "API version must match in three places."
    index = (memdir / "MEMORY.md").read_text()
    assert f"- [API version synchronization]({topic.name}): API version must match." in index
    assert "API version synchronization" in render_index(memdir)


def test_naive_store_is_a_negative_control() -> None:
    policy = AccessPolicy()
    store = open_store("naive://", access=policy)
    pref = store.store(
        MemoryDraft("acme/api", Kind.PREFERENCE, "Tone", "Terse."), actor=Actor("ana"), surface=Surface.CLI
    )
    assert store.recent("acme/api", actor=Actor("mallory"), surface=Surface.CODE_REVIEW) == [pref]
    assert "negative-control" in store.capabilities
    with pytest.raises(Exception, match="append-only"):
        store.retire(pref.id, actor=Actor("ana"), reason="x")
