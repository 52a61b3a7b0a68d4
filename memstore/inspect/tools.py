"""A session's tools as inspect tools: the code, the memory, and ``finish``.

The tools the reference LLM agent has (`memstore.agents`, ``llm:``), over the session's own
`Tools` and nothing else: ``list_files``, ``search`` and ``read_file``; on a coding task
``write_file`` and ``replace_in_file``; memstore's memory tools, those of the session's MCP
memory server reached in process (the same tools an MCP agent gets; what is done through them is
recorded as the session's events); and ``finish``, which reports a question's answer or a review's
findings. A tool's result is text, as a model reads it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from inspect_ai.tool import ToolDef, ToolParams
from mcp import Client

from memstore.harness.run import AgentSession, Tools
from memstore.model import Surface

__all__ = ["FINISH", "session_tools"]

FINISH = "finish"


def _text(description: str) -> dict[str, str]:
    return {"type": "string", "description": description}


def _params(properties: dict[str, Any], required: list[str]) -> ToolParams:
    """Parameters as inspect takes them: each described (a memory server's by its title, when it has no more)."""
    described = {
        name: {"description": str(spec.get("title") or name).replace("_", " "), **spec}
        for name, spec in properties.items()
    }
    return ToolParams.model_validate({"type": "object", "properties": described, "required": required})


def _code(tools: Tools, coding: bool) -> list[ToolDef]:
    """The tools that read (and, on a coding task, edit) the working copy."""

    async def list_files(pattern: str = "") -> str:
        return "\n".join(tools.files(pattern)) or "(no files)"

    async def search(pattern: str) -> str:
        return "\n".join(f"{h.path}:{h.line}: {h.text}" for h in tools.search(pattern)) or "(no matches)"

    async def read_file(path: str) -> str:
        lines = tools.lines(path)  # numbered as the language's tools number them
        if lines is None:
            return f"error: {path} is not a file of the repository"
        return "\n".join(f"{n:>5}  {line}" for n, line in enumerate(lines, 1))

    async def write_file(path: str, content: str) -> str:
        return "written" if tools.write(path, content) else f"error: cannot write {path}"

    async def replace_in_file(path: str, old: str, new: str) -> str:
        text = tools.read(path)
        if text is None or not old or old not in text:
            return f"error: the text to replace is not in {path}"
        done = tools.write(path, text.replace(old, new))
        return f"replaced {text.count(old)} occurrence(s)" if done else f"error: cannot write {path}"

    made = [
        ToolDef(list_files, "list_files", "Paths of the repository's files, those matching a regular expression "
                "when one is given.", _params({"pattern": _text("a regular expression searched in the path")}, [])),
        ToolDef(search, "search", "Lines of the repository that match a case-insensitive regular expression, "
                "as path:line: text.", _params({"pattern": _text("a regular expression")}, ["pattern"])),
        ToolDef(read_file, "read_file", "A file of the repository, with line numbers.",
                _params({"path": _text("the file's path in the repository")}, ["path"])),
    ]  # fmt: skip
    if coding:
        made += [
            ToolDef(write_file, "write_file", "Write a file of the repository (its whole new text).",
                    _params({"path": _text("the file's path"), "content": _text("its whole new text")},
                            ["path", "content"])),
            ToolDef(replace_in_file, "replace_in_file", "Replace every occurrence of a text in a file of the "
                    "repository.", _params({"path": _text("the file's path"), "old": _text("the text to replace"),
                                            "new": _text("the text to put in its place")}, ["path", "old", "new"])),
        ]  # fmt: skip
    return made


def _finish(tools: Tools) -> ToolDef:
    """``finish``: a question's answer, a review's findings."""

    async def finish(answer: str = "", findings: list[dict[str, str]] | None = None, summary: str = "") -> str:
        for finding in findings or []:
            if isinstance(finding, dict) and isinstance(finding.get("path"), str):
                tools.flag(finding["path"], str(finding.get("note", "")))
        if answer:
            tools.give_answer(answer)
        return "finished"

    finding = {"type": "object", "properties": {"path": _text("a file"), "note": _text("what it gets wrong")}}
    found = {"type": "array", "items": {**finding, "required": ["path"]}, "description": "the files the PR gets wrong"}
    return ToolDef(
        finish,
        FINISH,
        "End the task. A question's answer goes in answer; a review's findings (the files the pull request "
        "gets wrong) in findings.",
        _params({"answer": _text("a question's answer"), "findings": found, "summary": _text("what was done")}, []),
    )


def _inline(schema: Any, definitions: dict[str, Any]) -> Any:
    """A JSON schema with its ``$ref``s to ``$defs`` put in their place (inspect's parameters keep no references)."""
    if isinstance(schema, list):
        return [_inline(item, definitions) for item in schema]
    if not isinstance(schema, dict):
        return schema
    reference = schema.get("$ref")
    if isinstance(reference, str) and reference.startswith("#/$defs/"):
        return _inline(definitions.get(reference.removeprefix("#/$defs/"), {}), definitions)
    return {key: _inline(value, definitions) for key, value in schema.items() if key != "$defs"}


def _remote(client: Any, name: str) -> Callable[..., Awaitable[str]]:
    """A call of the memory server's tool ``name``, its result as text."""

    async def call(**arguments: Any) -> str:
        result = await client.call_tool(name, arguments)
        if result.is_error:
            return "error: " + " ".join(getattr(part, "text", "") for part in result.content)
        return json.dumps(result.structured_content)

    return call


@contextlib.asynccontextmanager
async def session_tools(session: AgentSession, *, memory: bool = True) -> AsyncIterator[list[ToolDef]]:
    """The session's tools (see the module docstring); the memory tools only with ``memory``, while
    the block runs (their server is connected for it)."""
    tools = session.tools
    made = _code(tools, session.task.surface is Surface.CODING_AGENT)
    if not memory:
        yield [*made, _finish(tools)]
        return
    async with Client(tools.mcp_server()) as client:
        for tool in (await client.list_tools()).tools:
            schema = dict(tool.input_schema)
            inlined = _inline(schema, schema.get("$defs", {}))
            parameters = _params(inlined.get("properties", {}), inlined.get("required", []))
            made.append(ToolDef(_remote(client, tool.name), tool.name, tool.description or tool.name, parameters))
        yield [*made, _finish(tools)]
