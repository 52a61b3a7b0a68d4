"""A session as an ATIF trajectory (the Agent Trajectory Interchange Format, v1.7, Harbor's).

Where a run keeps a session's transcript (``transcripts/ARM/SCENARIO/trial-N/TASK/``: a command
agent's, the reference LLM agent's), the trial loop also writes ``trajectory.json`` there: the
session as ATIF, the format Harbor and the trainers that read Harbor's runs take trajectories in.

Its first step is the harness's: what the store handed the session, each memory an observation.
Then the agent's. From its conversation, when it kept one as chat messages (the LLM agent's
``trajectory.jsonl``): each model message an agent step with its tool calls, the memory tools
among them, and their results as its observation. Otherwise from the session's events: the task
as a user step, then each operation of the agent's tools (a recall over MCP, verifying, using,
refusing, storing, correcting, refreshing, voting on and retiring a memory, an edit, a finding,
the answer) an agent step with one tool call, its arguments and what came of it. What the
harness saw of the session (a merge, tampering, an error) closes it as system steps. No grading
data: the events grading adds (``misled``, ``planted``, breaches) are never the session's own.

Written only where a transcript is kept: a run that keeps none (the stub agents) pays nothing.
Every value is the run's own (seeded ids, the scenario's clock), so a seed gives the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from memstore import __version__
from memstore.harness.records import EventKind
from memstore.harness.run.boundary.gateway import Event, Gateway, Recall, Usage
from memstore.harness.run.boundary.session import TaskView
from memstore.model import Memory, MemoryDraft

__all__ = ["ATIF_VERSION", "CONVERSATION", "TRAJECTORY", "keep_trajectory", "trajectory"]

ATIF_VERSION = "ATIF-v1.7"
TRAJECTORY = "trajectory.json"  # the name Harbor gives an ATIF document
CONVERSATION = "trajectory.jsonl"  # an agent's own conversation, as chat messages (the LLM agent's)
_MEMORY_CALLS = {
    EventKind.VERDICT: "verify_memory",
    EventKind.USE: "use_memory",
    EventKind.REFUSE: "refuse_memory",
    EventKind.REANCHOR: "reanchor_memory",
    EventKind.STORE: "store_memory",
    EventKind.CORRECT: "store_memory",
    EventKind.REFRESH: "refresh_memory",
    EventKind.RETIRE: "retire_memory",
    EventKind.VOTE: "vote_memory",
}
_WORK_CALLS = {
    EventKind.EDIT: ("edit_file", "where"),
    EventKind.FINDING: ("flag", "path"),
    EventKind.ANSWER: ("answer", "text"),
}
_DENIED = {"store": "store_memory", "correct": "store_memory", "refresh": "refresh_memory", "retire": "retire_memory"}
_RECALLS = {"mcp recent": "recent_memories", "mcp search": "search_memories", "mcp resource": "read_memories"}


def keep_trajectory(
    gateway: Gateway, view: TaskView, handed: Sequence[Memory], *, agent: str, session_id: str, started: datetime
) -> None:
    """Write the session's ``trajectory.json`` beside its transcript, when one is kept (whole or not at all)."""
    folder = gateway.transcript
    if folder is None or not gateway.kept:
        return
    conversation = _conversation(folder / CONVERSATION) if CONVERSATION in gateway.kept else None
    document = trajectory(
        view,
        handed,
        gateway.events,
        recalls=gateway.recalled,
        written=gateway.written,
        usage=gateway.usage,
        agent=agent,
        session_id=session_id,
        started=started,
        conversation=conversation,
    )
    partial = folder / f".{TRAJECTORY}.part"
    partial.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    partial.replace(folder / TRAJECTORY)


def trajectory(
    view: TaskView,
    handed: Sequence[Memory],
    events: Sequence[Event],
    *,
    recalls: Sequence[Recall] = (),
    written: Mapping[str, MemoryDraft] | None = None,
    usage: Usage | None = None,
    agent: str,
    session_id: str,
    started: datetime,
    conversation: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The session as an ATIF document (see the module docstring)."""
    steps: list[dict[str, Any]] = [_handed_step(view, handed, started)]
    if conversation is not None:
        steps += _from_conversation(conversation)
    else:
        steps.append({"source": "user", "message": _task_text(view)})
        steps += _from_events(events, recalls, written or {})
    steps += [_system(f"{e.kind.value}: {e.detail}" if e.detail else e.kind.value) for e in events if _harness_event(e)]
    for number, step in enumerate(steps, 1):
        step["step_id"] = number
    document: dict[str, Any] = {
        "schema_version": ATIF_VERSION,
        "session_id": session_id,
        "agent": {"name": agent, "version": __version__, "extra": {"harness": "memstore"}},
        "steps": steps,
        "extra": {
            "memstore": {
                "task": view.key,
                "surface": view.surface.value,
                "user": view.user,
                "repo": view.repo,
                "source": "conversation" if conversation is not None else "events",
            }
        },
    }
    if usage is not None:
        if usage.model:
            document["agent"]["model_name"] = usage.model
        document["final_metrics"] = {
            "total_prompt_tokens": usage.input_tokens,
            "total_completion_tokens": usage.output_tokens,
            "total_cached_tokens": usage.cache_tokens,
            "total_cost_usd": round(usage.cost_usd, 6),
            "total_steps": len(steps),
        }
    return document


def _system(message: str) -> dict[str, Any]:
    return {"source": "system", "message": message}


def _harness_event(event: Event) -> bool:
    """Whether the event is the harness's own account of the session, not an operation of the agent's tools."""
    return event.kind in {EventKind.MERGE, EventKind.TAMPERED, EventKind.AGENT_ERROR, EventKind.INFRA_ERROR}


def _memory_result(memory: Memory, position: int) -> dict[str, Any]:
    content = json.dumps(memory.to_dict(), sort_keys=True)
    return {"content": content, "extra": {"memory_id": memory.id, "position": position}}


def _handed_step(view: TaskView, handed: Sequence[Memory], started: datetime) -> dict[str, Any]:
    count = "1 memory" if len(handed) == 1 else f"{len(handed)} memories"
    step = _system(f"The store handed {count} to task {view.key} ({view.surface.value}, {view.user} in {view.repo}).")
    step["timestamp"] = started.isoformat()
    if handed:
        step["observation"] = {"results": [_memory_result(m, i) for i, m in enumerate(handed)]}
    return step


def _task_text(view: TaskView) -> str:
    """The task as the agent was given it: its prompt, ticket, question and pull request."""
    lines = [f"Task: {view.prompt}"]
    if view.intent is not None:
        lines.append(f"Ticket: {view.intent.describe()}")
    if view.question:
        lines.append(f"Question: {view.question}")
    if view.pull_request is not None:
        pr = view.pull_request
        lines += [f"Pull request: {pr.title} ({pr.branch} into {pr.base})", pr.description]
        lines.append(f"Changed files: {', '.join(pr.changed_files)}")
    return "\n".join(line for line in lines if line)


def _call(number: int, name: str, arguments: dict[str, Any], result: str | list[dict[str, Any]]) -> dict[str, Any]:
    """An agent step of one tool call and its observation."""
    call_id = f"call_{number}"
    results = (result or [{"content": "(nothing)"}]) if isinstance(result, list) else [{"content": result}]
    return {
        "source": "agent",
        "message": "",
        "tool_calls": [{"tool_call_id": call_id, "function_name": name, "arguments": arguments}],
        "observation": {"results": [{**r, "source_call_id": call_id} for r in results]},
    }


def _from_events(
    events: Sequence[Event], recalls: Sequence[Recall], written: Mapping[str, MemoryDraft]
) -> list[dict[str, Any]]:
    """An agent step per operation of the agent's tools; a recall over MCP is one call, whatever it returned."""
    steps: list[dict[str, Any]] = []
    pending = sorted(recalls, key=lambda r: r.at)
    for at in range(len(events) + 1):
        while pending and pending[0].at <= at:
            recall = pending.pop(0)
            how = next((e.detail for e in events[at : at + 1] if e.kind is EventKind.RETRIEVE), "")
            results = [_memory_result(m, i) for i, m in enumerate(recall.memories)]
            steps.append(_call(len(steps) + 1, _RECALLS.get(how, "recall_memories"), {}, results))
        if at == len(events):
            break
        event = events[at]
        if event.kind is EventKind.RETRIEVE or _harness_event(event):
            continue  # a recall's memories are its call's results; the harness's events close the session
        name, arguments, result = _operation(event, written)
        if name:
            steps.append(_call(len(steps) + 1, name, arguments, result))
    return steps


def _operation(event: Event, written: Mapping[str, MemoryDraft]) -> tuple[str, dict[str, Any], str]:
    """The tool call an event records: its name, its arguments and what came of it ("" for none)."""
    kind, memory_id, detail = event.kind, event.memory_id, event.detail
    if kind in _WORK_CALLS:
        name, argument = _WORK_CALLS[kind]
        return name, {argument: detail}, "refused" if "(refused)" in detail or "(no such" in detail else "done"
    if kind is EventKind.DENIED:
        operation, _, why = detail.partition(": ")
        return _DENIED.get(operation, f"{operation}_memory"), {"memory_id": memory_id}, f"denied: {why}"
    name = _MEMORY_CALLS.get(kind, "")
    if kind in {EventKind.STORE, EventKind.CORRECT}:
        draft = written.get(memory_id)
        arguments: dict[str, Any] = {} if draft is None else _draft(draft)
        if kind is EventKind.CORRECT:
            arguments["supersedes"] = detail
        return name, arguments, f"stored {memory_id}"
    arguments = {"memory_id": memory_id}
    if kind is EventKind.VOTE:
        direction, _, reason = detail.partition(": ")
        arguments |= {"up": direction == "up", "reason": reason}
    elif kind in {EventKind.REFUSE, EventKind.RETIRE}:
        arguments["reason"] = detail
    return name, arguments, detail if kind in {EventKind.VERDICT, EventKind.REANCHOR} else "done"


def _draft(draft: MemoryDraft) -> dict[str, Any]:
    return {
        "subject": draft.subject,
        "fact": draft.fact,
        "citations": [str(c) for c in draft.citations],
        "reason": draft.reason,
        "kind": draft.kind.value,
    }


def _conversation(path: Path) -> list[dict[str, Any]] | None:
    """An agent's conversation as chat messages (one JSON object with a ``role`` a line), or None."""
    try:
        messages = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, ValueError):
        return None
    roles = {"system", "user", "assistant", "tool"}
    if not messages or not all(isinstance(m, dict) and m.get("role") in roles for m in messages):
        return None
    return messages


def _text(content: object) -> str:
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def _arguments(raw: object) -> dict[str, Any]:
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return {"raw": raw}
    return parsed if isinstance(parsed, dict) else {"value": parsed}


def _from_conversation(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A step per message: the model's as agent steps with their tool calls; each tool's result
    joins the observation of the step whose call it answers."""
    steps: list[dict[str, Any]] = []
    for message in messages:
        role = message["role"]
        if role == "assistant":
            calls = [
                {
                    "tool_call_id": str(call.get("id", "")),
                    "function_name": str((call.get("function") or {}).get("name", "")),
                    "arguments": _arguments((call.get("function") or {}).get("arguments") or "{}"),
                }
                for call in message.get("tool_calls") or []
            ]
            step: dict[str, Any] = {"source": "agent", "message": _text(message.get("content"))}
            if calls:
                step["tool_calls"] = calls
            steps.append(step)
        elif role == "tool" and steps and steps[-1]["source"] == "agent":
            answered = {c["tool_call_id"] for c in steps[-1].get("tool_calls", [])}
            call_id = str(message.get("tool_call_id", ""))
            result = {
                "content": _text(message.get("content")),
                **({"source_call_id": call_id} if call_id in answered else {}),
            }
            steps[-1].setdefault("observation", {"results": []})["results"].append(result)
        else:
            steps.append({"source": "user" if role == "user" else "system", "message": _text(message.get("content"))})
    return steps
