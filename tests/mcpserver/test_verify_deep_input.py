"""``verify_memory`` over MCP on a memory citing input nested too deeply to parse: a verdict with
its reason, never "Error executing tool" (issue 43, item 6). The repository: `tests.deep_code`."""

from __future__ import annotations

from pathlib import Path

from mcp import Client

from memstore.mcp.server import build_server
from tests.deep_code import GOOD, HOSTILE, deep_repository
from tests.mcpserver.test_server import _call, _run, _service

TOO_DEEP = "too deeply nested to parse (more than 200 levels of syntax)"


def test_verify_memory_answers_a_verdict_on_deep_input(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'm.db'}"
    answers: dict[str, tuple[bool, dict[str, object]]] = {}

    async def body(repo: Path) -> None:
        async with Client(build_server(_service(db, repo))) as client:
            for shape, (subject, fact, cite) in {"good": GOOD, **HOSTILE}.items():
                error, made = await _call(client, "store_memory", subject=subject, fact=fact, citations=[cite])
                assert not error, made
                answers[shape] = await _call(client, "verify_memory", memory_id=made["id"])

    with deep_repository(tmp_path / "api") as built:
        _run(lambda: body(built.path))

        assert {shape: error for shape, (error, _) in answers.items()} == dict.fromkeys(answers, False), answers
        assert {shape: verdict["verdict"] for shape, (_, verdict) in answers.items()} == {
            "good": "valid",
            "expression": "missing",
            "elif": "missing",
            "folders": "valid",
        }
        assert answers["expression"][1]["reason"] == f"not checked: expr.py: {TOO_DEEP}"
        assert answers["elif"][1]["reason"] == f"not checked: elif.py: {TOO_DEEP}"
        assert answers["expression"][1]["usable"] is False
