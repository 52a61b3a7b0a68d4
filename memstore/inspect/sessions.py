"""An inspect solver as memstore's agent: each session of a trial, a conversation with inspect's model.

`SolverAgent` is the memstore agent an ``inspect:MODEL`` spec plays. For each session the trial loop
hands it (an `AgentSession`: the task as an agent sees it, the memories the store returned, the
session's tools) it runs an inspect solver, on inspect's event loop, over the sample's state: a
fresh conversation (the reference LLM agent's prompts, ``memstore/agents/prompts/``) and the
session's tools (`memstore.inspect.tools`). The solver is the seam: `tool_loop` by default, or any
inspect solver that calls ``generate`` with the state's tools. Nothing of the grading reaches it.

Memory between sessions is the store's alone: each session starts a new conversation. The sample's
messages are every session's, in order, for the log. What the model spent is reported as the
session's usage; a model that fails (after inspect's retries) ends the session as an infrastructure
error, and a sample limit that is reached ends it as the agent left it.
"""

from __future__ import annotations

from typing import Any

import anyio.from_thread
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, ModelUsage
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import LimitExceededError

from memstore.agents import PROMPT_VERSION
from memstore.agents import system_prompt as reference_system_prompt
from memstore.agents import task_prompt as reference_task_prompt
from memstore.harness.records import Role
from memstore.harness.run import AgentSession, Usage
from memstore.inspect.tools import FINISH, session_tools
from memstore.model import Surface

__all__ = ["PROMPTS", "SolverAgent", "task_prompt", "tool_loop"]

PROMPTS = PROMPT_VERSION  # the version of the reference LLM agent's prompts the sessions are asked with


def system_prompt(session: AgentSession) -> str:
    """The system message of a session: the reference LLM agent's, for the session's surface."""
    return reference_system_prompt(session, PROMPTS)


def task_prompt(session: AgentSession) -> str:
    """The task as the session's first user message, as the reference LLM agent words it."""
    return reference_task_prompt(session, PROMPTS)


@solver
def tool_loop(steps: int = 30) -> Solver:
    """The default session solver: generate, run the tools the model calls, until it calls
    ``finish``, answers without a tool, or has made ``steps`` calls to the model."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        for _ in range(steps):
            state = await generate(state, tool_calls="single")
            calls = state.output.message.tool_calls or []
            if not calls or any(call.function == FINISH for call in calls):
                break
        return state

    return solve


class _Counted:
    """The sample's ``generate``, counting what each call spent, and ending the session on a model failure."""

    def __init__(self, generate: Generate, session: AgentSession, model: str) -> None:
        self.generate, self.session = generate, session
        self.usage = Usage(model=model)
        self.failed: BaseException | None = None  # the model's failure that ended the session, if one did

    async def __call__(self, state: TaskState, *args: Any, **kwargs: Any) -> TaskState:
        try:
            state = await self.generate(state, *args, **kwargs)
        except LimitExceededError:
            raise
        except Exception as exc:
            self.session.tools.infrastructure_error(f"the model failed: {type(exc).__name__}: {exc}")
            self.failed = exc
            raise
        spent: ModelUsage | None = state.output.usage
        if spent is not None:
            cached = spent.input_tokens_cache_read or 0
            self.usage = self.usage + Usage(spent.input_tokens, spent.output_tokens, cached)
        return state


class SolverAgent:
    """memstore's agent for an inspect sample: each session solved by ``solver`` with the sample's
    model (see the module docstring); ``memory=False`` is the control, handed nothing."""

    def __init__(self, solver: Solver, state: TaskState, generate: Generate, *, memory: bool = True) -> None:
        self.solver, self.state, self.generate = solver, state, generate
        self.name = f"inspect:{state.model}" + ("" if memory else " (no memory)")
        self.uses_memory = memory
        self.role = Role.TREATMENT if memory else Role.CONTROL
        self.verifies = memory  # the prompt has the model verify each memory before use
        self.messages: list[ChatMessage] = []  # every session's conversation, in order

    def work(self, session: AgentSession) -> None:
        """Solve one session on inspect's event loop (the trial runs in a worker thread of it)."""
        anyio.from_thread.run(self._session, session)

    async def _session(self, session: AgentSession) -> None:
        state = self.state
        counted = _Counted(self.generate, session, str(state.model))
        async with session_tools(session, memory=self.uses_memory) as tools:
            state.messages = [
                ChatMessageSystem(content=system_prompt(session)),
                ChatMessageUser(content=task_prompt(session)),
            ]
            state.tools = tools
            try:  # a limit reached or the model failing ends the session as the agent left it
                state = await self.solver(state, counted)
            except LimitExceededError:
                pass
            except Exception as exc:
                if exc is not counted.failed:
                    raise
        _answer_in_text(session, state.messages)
        session.tools.report_usage(counted.usage)
        self.messages += state.messages
        self.state = state


def _answer_in_text(session: AgentSession, messages: list[ChatMessage]) -> None:
    """A question's answer given as the model's last words, without ``finish``: the answer (as the
    reference LLM agent takes it), unless ``finish`` gave one."""
    last = messages[-1] if messages else None
    if session.task.surface is not Surface.CLI or not isinstance(last, ChatMessageAssistant) or last.tool_calls:
        return
    calls = [call for m in messages if isinstance(m, ChatMessageAssistant) for call in m.tool_calls or []]
    if any(call.function == FINISH for call in calls):
        return
    if last.text.strip():
        session.tools.give_answer(last.text.strip())
