"""Inspect evals of memstore's task, run offline with inspect's mock model (``mockllm/model``) scripted
to work each session right or wrong."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

SCENARIOS = "api-version-moved,jest-to-vitest,logging-abandoned-branch"  # 1 coding task, 3 questions
EPOCHS = 3
ANSWERS = {  # the questions of SCENARIOS and their right answers (what the scenarios' authors hold)
    "Which command do the tests run?": "vitest run --coverage",
    "Which function makes mocks in the tests?": "vi.fn",
    "How long are log files kept?": "30 days",
}
VERSION_FILES = ("src/client/sdk/constants.ts", "server/routes/api.go", "docs/api-reference.md")


def scripted(right: bool, seen: list[str] | None = None) -> Callable[..., Any]:
    """The mock model's outputs, call by call: a question is looked up in memory, then answered
    (rightly, or "I do not know"); a coding task is the API version bumped in the three files that
    hold it (or nothing done), then ``finish``. ``seen`` collects every message the model is sent."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ModelOutput, ModelUsage

    def respond(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        if seen is not None:
            seen.extend(m.text for m in messages)
        task = next(m.text for m in messages if isinstance(m, ChatMessageUser))
        step = sum(isinstance(m, ChatMessageAssistant) for m in messages)
        if "Question: " in task:
            question = task.split("Question: ")[1].splitlines()[0]
            call = ("search_memories", {"query": question}) if step == 0 else (
                "finish", {"answer": ANSWERS[question] if right else "I do not know"})  # fmt: skip
        elif right and step < len(VERSION_FILES):
            call = ("replace_in_file", {"path": VERSION_FILES[step], "old": "v2.1.4", "new": "v2.2.0"})
        else:
            call = ("finish", {"summary": "done"})
        made = ModelOutput.for_tool_call("mockllm/model", *call)
        made.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)  # no tokenizer to fetch
        return made

    return respond


def run(log_dir: Path, task: Any, model: Any = "mockllm/model", **options: Any) -> Any:
    """One eval, quietly; its log (which it also writes into ``log_dir``)."""
    from inspect_ai import eval as inspect_eval

    (log,) = inspect_eval(task, model=model, log_dir=str(log_dir), display="none", **options)
    return log


def model_log(log_dir: Path, right: bool, scenarios: str = SCENARIOS, epochs: int = EPOCHS) -> Any:
    from inspect_ai.model import get_model

    from memstore.inspect import memstore_task

    model = get_model("mockllm/model", custom_outputs=scripted(right))
    return run(log_dir, memstore_task(scenarios=scenarios), model, epochs=epochs)
