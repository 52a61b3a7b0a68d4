"""A mined scenario: the memories `memstore.harness.scenarios.mining` wrote, as a scenario file the
harness runs. It starts from the ``empty`` fixture and imports the cited files as they were at
``--from`` (where the memories are learned), then as they are at ``--to``, in its own history,
so one file holds all it needs; CLI questions hand the memories to sessions."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from memstore.harness.scenarios.mining import Mined, file_text
from memstore.verify import Codebase

__all__ = ["scenario_document"]


def _pattern_of(item: Mined) -> str:
    """A pattern whose group 1 is the value ``item`` states, where it stands at --to."""
    name = re.escape(item.subject.split(" ")[0].rpartition(".")[2])
    if item.kind == "constant":
        return rf"(?m)^\s*{name}\s*(?::[^=\n]+)?=\s*([^\n#]+?)\s*(?:#.*)?$"
    return ""


def scenario_document(
    items: Sequence[Mined],
    before: Codebase,
    after: Codebase,
    *,
    name: str,
    repo: str,
    refs: tuple[str, str],
    tasks: int = 5,
) -> dict[str, object]:
    """A scenario the harness runs: an empty repository that imports the cited files as they were
    at ``refs[0]`` (where the memories are learned), then as they are at ``refs[1]``, with the
    memories and their labels, and CLI questions about the values they state."""
    cited = sorted({m.path for m in items})
    landed = sorted({m.now_path for m in items if m.now_path and m.now_path not in cited})

    imported = [{"write": {"path": p, "text": t}} for p in cited if (t := file_text(before, p)) is not None]
    upgrade: list[dict[str, object]] = []
    for path in [*cited, *landed]:
        now = file_text(after, path)
        upgrade.append({"write": {"path": path, "text": now}} if now is not None else {"remove": {"path": path}})
    memories = [_memory(item, refs[0]) for item in items]
    task_list = _tasks(items, tasks)
    return {
        "name": name,
        "description": f"Mined from {repo} between {refs[0]} and {refs[1]} by `memstore mine`: memories written "
        f"the way an agent writes them at {refs[0]}, labelled by the syntax trees of both versions.",
        "tags": ["mined"],
        "fixture": "empty",
        "repo": repo,
        "users": {"ana": {repo: "admin"}, "dev": {repo: "write"}},
        "history": [
            {"commit": f"Import at {refs[0]}", "label": "from", "edits": imported},
            {"commit": f"Upgrade to {refs[1]}", "label": "to", "edits": upgrade},
        ],
        "memories": memories,
        "tasks": task_list,
    }


def _memory(item: Mined, learned_at: str) -> dict[str, object]:
    """The scenario's entry for one mined memory (its claim where the code holds a value to check)."""
    memory: dict[str, object] = {
        "key": item.key,
        "origin": item.origin,
        "truth": item.truth,
        "author": "ana",
        "surface": "coding_agent",
        "learned_at": "from",
        "subject": item.subject,
        "fact": item.fact,
        "citations": [f"{item.path}:{item.line}"],
        "reason": f"Learned while working on the code at {learned_at}.",
        "age": "20d",
    }
    if item.kind == "constant" and item.truth in {"valid", "moved", "contradicted"} and item.now_path:
        memory["claim"] = {"states": item.old_value, "at": {"path": item.now_path, "pattern": _pattern_of(item)}}
    return memory


def _tasks(items: Sequence[Mined], count: int) -> list[dict[str, object]]:
    """CLI questions about what the memories state: values first (what the stubs and most agents
    answer); a question of where a definition lives only when there is no value to ask about, so
    every scenario hands its memories to a session."""
    values = [m for m in items if m.kind == "constant" and m.now_path and m.truth in {"contradicted", "moved", "valid"}]
    values.sort(key=lambda m: (m.truth != "contradicted", m.key))
    places = [m for m in items if m.kind == "definition" and m.now_path and m.truth in {"moved", "valid"}]
    places.sort(key=lambda m: (m.truth != "moved", m.key))
    task_list: list[dict[str, object]] = []
    for item in (values or places[:1])[:count]:
        name_of = item.subject.split(" ")[-2] if item.kind == "definition" else item.subject.split(" ")[0]
        n = len(task_list)
        task: dict[str, object] = {"key": f"ask-{n}", "surface": "cli", "user": "dev", "after": f"{n + 1}h"}
        if item.kind == "constant":
            task |= {
                "prompt": f"What is {name_of} set to?",
                "intent": {"ask": name_of},
                "question": f"What is {name_of} set to in {PurePosixPath(item.path).name}?",
                "answer_at": {"path": item.now_path, "pattern": _pattern_of(item)},
            }
        else:
            task |= {
                "prompt": f"Which file defines {name_of}?",
                "intent": {"ask": name_of},
                "question": f"Which file defines {name_of}?",
                "answer": item.now_path,
            }
        task_list.append({**task, "needs": [item.key]})
    return task_list
