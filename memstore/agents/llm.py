"""The reference LLM agent: a tool-calling loop over any OpenAI-compatible chat-completions API.

``--agent llm:MODEL`` runs it; options follow the model as a query string::

    --agent 'llm:gpt-4.1-mini?base_url=http://127.0.0.1:8000/v1&steps=30&price_in=0.4&price_out=1.6'

| option | default | meaning |
|---|---|---|
| ``base_url`` | ``$OPENAI_BASE_URL``, else OpenAI's | the endpoint (any OpenAI-compatible server) |
| ``key_env`` | ``OPENAI_API_KEY`` | the environment variable holding the API key |
| ``steps`` | 30 | model calls a session may make |
| ``tokens`` | 500000 | input plus output tokens a session may spend |
| ``price_in``, ``price_out``, ``price_cached`` | 0 | US dollars per million tokens, for ``cost_usd`` |
| ``memory`` | true | false: no memory tools and nothing handed (the control arm) |
| ``prompts`` | v1 | the prompt version (``memstore/agents/prompts/``) |

Each session, the model gets a system prompt and the task (its surface, prompt, pull request or
question, and the memories the store returned), and tools: ``list_files``, ``search``,
``read_file``; on a coding task ``write_file`` and ``replace_in_file``; the memory tools of the
session's ``memstore mcp`` server, reached in process through the official MCP client (the same
tools an MCP agent gets); and ``finish``. What it spent is reported as the session's usage; its
conversation is kept as the session's trajectory. A failed endpoint (connection, timeout, rate
limit, 5xx) ends the session as an infrastructure error, not a failed task.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, fields, replace
from importlib import resources
from typing import Any
from urllib.parse import parse_qsl

from memstore.errors import ConfigurationError
from memstore.harness.records import EventKind, Role
from memstore.harness.run import AgentSession, Usage
from memstore.model import Memory, Surface

__all__ = ["PROMPT_VERSION", "LlmAgent", "LlmSettings", "make", "system_prompt", "task_prompt"]

PROMPT_VERSION = "v1"
RESULT_CHARS = 12_000  # of a tool's result shown to the model (the rest is cut, and it is told so)


@dataclass(frozen=True)
class LlmSettings:
    """How the agent calls its model (see the module docstring)."""

    model: str
    base_url: str | None = None
    key_env: str = "OPENAI_API_KEY"
    steps: int = 30
    tokens: int = 500_000
    price_in: float = 0.0
    price_out: float = 0.0
    price_cached: float = 0.0
    memory: bool = True
    prompts: str = PROMPT_VERSION

    @classmethod
    def parse(cls, spec: str) -> LlmSettings:
        """From ``MODEL?name=value&...``.

        Raises:
            ConfigurationError: for a missing model, an unknown option or a bad value.
        """
        model, _, query = spec.partition("?")
        if not model:
            raise ConfigurationError("'llm:' needs a model, such as 'llm:gpt-4.1-mini'")
        settings = cls(model=model)
        kinds = {f.name: f.type for f in fields(cls)}
        for name, value in parse_qsl(query, keep_blank_values=True):
            if name not in kinds or name == "model":
                raise ConfigurationError(
                    f"unknown llm option {name!r}; known: {', '.join(sorted(set(kinds) - {'model'}))}"
                )
            try:
                settings = replace(settings, **{name: _convert(str(kinds[name]), value)})
            except ValueError as exc:
                raise ConfigurationError(f"llm option {name}={value!r}: {exc}") from exc
        if settings.steps < 1 or settings.tokens < 1:
            raise ConfigurationError("llm options steps and tokens must be at least 1")
        if not resources.files("memstore.agents").joinpath("prompts", settings.prompts, "system.md").is_file():
            raise ConfigurationError(f"no prompts of version {settings.prompts!r} in memstore/agents/prompts")
        return settings


def _convert(kind: str, value: str) -> Any:
    if "bool" in kind:
        if value.lower() not in {"true", "false", "1", "0"}:
            raise ValueError("true or false")
        return value.lower() in {"true", "1"}
    if "int" in kind:
        return int(value)
    if "float" in kind:
        number = float(value)
        if number < 0:
            raise ValueError("not negative")
        return number
    return value


def _prompt(version: str, name: str) -> str:
    return resources.files("memstore.agents").joinpath("prompts", version, name).read_text(encoding="utf-8")


def _function(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


_TEXT = {"type": "string"}
CODE_TOOLS = [
    _function("list_files", "Paths of the repository's files, those matching a regular expression when one is given.",
              _object({"pattern": _TEXT}, [])),
    _function("search", "Lines of the repository that match a case-insensitive regular expression, as path:line: text.",
              _object({"pattern": _TEXT}, ["pattern"])),
    _function("read_file", "A file of the repository, with line numbers.", _object({"path": _TEXT}, ["path"])),
]  # fmt: skip
EDIT_TOOLS = [
    _function("write_file", "Write a file of the repository (its whole new text).",
              _object({"path": _TEXT, "content": _TEXT}, ["path", "content"])),
    _function("replace_in_file", "Replace every occurrence of a text in a file of the repository.",
              _object({"path": _TEXT, "old": _TEXT, "new": _TEXT}, ["path", "old", "new"])),
]  # fmt: skip
FINISH = _function(
    "finish",
    "End the task. A question's answer goes in answer; a review's findings (the files the pull request gets "
    "wrong) in findings.",
    _object(
        {
            "answer": _TEXT,
            "findings": {"type": "array", "items": _object({"path": _TEXT, "note": _TEXT}, ["path"])},
            "summary": _TEXT,
        },
        [],
    ),
)


class LlmAgent:
    """The reference LLM agent (see the module docstring)."""

    def __init__(self, settings: LlmSettings) -> None:
        try:
            import openai  # noqa: F401
        except ImportError as exc:
            raise ConfigurationError(
                "the llm agent needs the openai package: pip install 'agent-memstore[llm]'"
            ) from exc
        self.settings = settings
        self.name = f"llm:{settings.model}" + ("" if settings.memory else " (no memory)")
        self.uses_memory = settings.memory
        self.role = Role.TREATMENT if settings.memory else Role.CONTROL
        self.verifies = settings.memory  # its prompt has it verify each memory before use

    def work(self, session: AgentSession) -> None:
        import anyio

        anyio.run(self._work, session)

    async def _work(self, session: AgentSession) -> None:
        from mcp import Client
        from openai import AsyncOpenAI

        settings = self.settings
        client = AsyncOpenAI(
            base_url=settings.base_url or os.environ.get("OPENAI_BASE_URL"),
            api_key=os.environ.get(settings.key_env) or "not-set",
            timeout=min(120.0, session.limits.seconds),
            max_retries=1,
        )
        conversation = _Conversation(self, session)
        if not settings.memory:
            await conversation.run(client, None, [])
            return
        async with Client(session.tools.mcp_server()) as mcp:
            listed = (await mcp.list_tools()).tools
            memory_tools = [_function(t.name, t.description or "", dict(t.input_schema)) for t in listed]
            await conversation.run(client, mcp, memory_tools)

    def system_prompt(self, session: AgentSession) -> str:
        return system_prompt(session, self.settings.prompts)

    def task_prompt(self, session: AgentSession) -> str:
        return task_prompt(session, self.settings.prompts)


def system_prompt(session: AgentSession, prompts: str = PROMPT_VERSION) -> str:
    """A session's system message in the prompts of version ``prompts``, for its surface (the
    reference agent's; memstore's inspect task hands inspect's model the same)."""
    task = session.task
    coding = task.surface is Surface.CODING_AGENT
    return _prompt(prompts, "system.md").format(
        repo=task.repo,
        user=task.user,
        edit_tools=", and to edit them" if coding else "",
        surface_rules=_prompt(prompts, f"surface-{task.surface.value}.md").strip(),
    )


def task_prompt(session: AgentSession, prompts: str = PROMPT_VERSION) -> str:
    """A session's task as its first user message: what the agent boundary shows, and each memory
    handed (its id, kind, subject, fact, citations, reason and the day it was stored)."""
    task = session.task
    details = [f"Ticket: {task.intent.describe()}"] if task.intent is not None else []
    if task.question:
        details.append(f"Question: {task.question}")
    if task.pull_request is not None:
        pr = task.pull_request
        details += [f"Pull request: {pr.title} ({pr.branch} into {pr.base})", pr.description,
                    f"Changed files: {', '.join(pr.changed_files)}", "Diff:", pr.diff]  # fmt: skip
    memories = [json.dumps(_shown(m)) for m in session.memories]
    return _prompt(prompts, "task.md").format(
        prompt=task.prompt, details="\n".join(details), count=len(memories), memories="\n".join(memories) or "(none)"
    )


def _shown(memory: Memory) -> dict[str, Any]:
    """A memory handed, as the task prompt shows it."""
    return {
        "id": memory.id,
        "kind": memory.kind.value,
        "subject": memory.subject,
        "fact": memory.fact,
        "citations": [str(c) for c in memory.citations],
        "reason": memory.reason,
        "stored": memory.created_at.date().isoformat(),
    }


class _Conversation:
    """One session's exchange with the model."""

    def __init__(self, agent: LlmAgent, session: AgentSession) -> None:
        self.agent, self.session, self.settings = agent, session, agent.settings
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": agent.system_prompt(session)},
            {"role": "user", "content": agent.task_prompt(session)},
        ]
        self.usage = Usage(model=self.settings.model)
        self.stop = "steps"

    async def run(self, client: Any, mcp: Any, memory_tools: list[dict[str, Any]]) -> None:
        """Ask and answer until the model finishes, the budget is spent or the endpoint fails."""
        coding = self.session.task.surface is Surface.CODING_AGENT
        tools = [*CODE_TOOLS, *(EDIT_TOOLS if coding else []), *memory_tools, FINISH]
        memory_names = {t["function"]["name"] for t in memory_tools}
        try:
            for _ in range(self.settings.steps):
                if self.usage.input_tokens + self.usage.output_tokens >= self.settings.tokens:
                    self.stop = "tokens"
                    break
                message = await self._ask(client, tools)
                if message is None:
                    return
                if not message.get("tool_calls"):
                    self.stop = "replied without a tool"
                    if self.session.task.surface is Surface.CLI and message.get("content"):
                        self.session.tools.give_answer(str(message["content"]))
                    return
                for call in message["tool_calls"]:
                    if await self._call(call, mcp, memory_names):
                        self.stop = "finish"
                        return
        finally:
            self._conclude()

    async def _ask(self, client: Any, tools: list[dict[str, Any]]) -> dict[str, Any] | None:
        """The model's next message (kept in the conversation), or None when the endpoint failed."""
        import openai

        try:
            response = await client.chat.completions.create(
                model=self.settings.model, messages=self.messages, tools=tools, temperature=0
            )
        except (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError) as exc:
            self.stop = "endpoint failed"
            self.session.tools.infrastructure_error(
                f"the model endpoint {client.base_url} failed: {type(exc).__name__}: {exc}"[:500]
            )
            return None
        except openai.APIError as exc:
            self.stop = "endpoint refused"
            said = f"the model endpoint {client.base_url} refused: {exc}"
            self.session.tools.record(EventKind.AGENT_ERROR, "", said[:500])
            return None
        spent = response.usage
        if spent is not None:
            details = getattr(spent, "prompt_tokens_details", None)
            cached = int(getattr(details, "cached_tokens", 0) or 0)
            self.usage = self.usage + Usage(spent.prompt_tokens, spent.completion_tokens, cached)
        message: dict[str, Any] = response.choices[0].message.model_dump(exclude_none=True)
        message = {k: v for k, v in message.items() if k in {"role", "content", "tool_calls"}}
        self.messages.append(message)
        return message

    async def _call(self, call: dict[str, Any], mcp: Any, memory_names: set[str]) -> bool:
        """Run one tool call and answer it in the conversation; True when it was ``finish``."""
        name = call["function"]["name"]
        try:
            arguments = json.loads(call["function"].get("arguments") or "{}")
            if not isinstance(arguments, dict):
                raise ValueError("the arguments are not an object")
        except ValueError as exc:
            self._answer(call, f"error: the arguments are not valid JSON ({exc})")
            return False
        if name == "finish":
            tools = self.session.tools
            for finding in arguments.get("findings") or []:
                if isinstance(finding, dict) and isinstance(finding.get("path"), str):
                    tools.flag(finding["path"], str(finding.get("note", "")))
            if isinstance(arguments.get("answer"), str) and arguments["answer"]:
                tools.give_answer(arguments["answer"])
            self._answer(call, "finished")
            return True
        if name in memory_names and mcp is not None:
            result = await mcp.call_tool(name, arguments)
            if result.is_error:
                text = " ".join(getattr(part, "text", "") for part in result.content)
                self._answer(call, f"error: {text}")
            else:
                self._answer(call, json.dumps(result.structured_content))
            return False
        self._answer(call, self._code(name, arguments))
        return False

    def _code(self, name: str, arguments: dict[str, Any]) -> str:
        tools = self.session.tools
        coding = self.session.task.surface is Surface.CODING_AGENT
        path = str(arguments.get("path", ""))
        if name == "list_files":
            return "\n".join(tools.files(str(arguments.get("pattern", "")))) or "(no files)"
        if name == "search":
            hits = tools.search(str(arguments.get("pattern", "")))
            return "\n".join(f"{h.path}:{h.line}: {h.text}" for h in hits) or "(no matches)"
        if name == "read_file":
            lines = tools.lines(path)  # numbered as the language's tools number them
            if lines is None:
                return f"error: {path} is not a file of the repository"
            return "\n".join(f"{n:>5}  {line}" for n, line in enumerate(lines, 1))
        if name == "write_file" and coding:
            return "written" if tools.write(path, str(arguments.get("content", ""))) else f"error: cannot write {path}"
        if name == "replace_in_file" and coding:
            text = tools.read(path)
            old = str(arguments.get("old", ""))
            if text is None or not old or old not in text:
                return f"error: the text to replace is not in {path}"
            done = tools.write(path, text.replace(old, str(arguments.get("new", ""))))
            return f"replaced {text.count(old)} occurrence(s)" if done else f"error: cannot write {path}"
        return f"error: no tool named {name!r} here"

    def _answer(self, call: dict[str, Any], text: str) -> None:
        if len(text) > RESULT_CHARS:
            text = text[:RESULT_CHARS] + f"\n[cut: {len(text) - RESULT_CHARS} more characters]"
        self.messages.append({"role": "tool", "tool_call_id": call["id"], "content": text})

    def _conclude(self) -> None:
        """Report the usage (priced) and keep the conversation as the session's trajectory."""
        s, u = self.settings, self.usage
        cost = ((u.input_tokens - u.cache_tokens) * s.price_in + u.cache_tokens * s.price_cached
                + u.output_tokens * s.price_out) / 1_000_000  # fmt: skip
        self.session.tools.report_usage(replace(u, cost_usd=cost))
        tools = self.session.tools
        tools.keep("trajectory.jsonl", "".join(json.dumps(m) + "\n" for m in self.messages))
        summary = {"agent": self.agent.name, "prompts": s.prompts, "stop": self.stop, "usage": {
            "input_tokens": u.input_tokens, "output_tokens": u.output_tokens, "cache_tokens": u.cache_tokens,
            "cost_usd": round(cost, 6), "model": s.model}, "messages": len(self.messages)}  # fmt: skip
        tools.keep("session.json", json.dumps(summary, indent=2))


def make(spec: str) -> LlmAgent:
    """The agent for ``--agent llm:SPEC``."""
    return LlmAgent(LlmSettings.parse(spec))


def llm_agent(spec: str, runtime: object) -> LlmAgent:
    """The ``llm:`` agent scheme's factory (`memstore.harness.run.boundary.agents.AGENT_SCHEMES`)."""
    return make(spec)
