#!/usr/bin/env python3
"""memstore adapter for mini-swe-agent (https://github.com/SWE-agent/mini-swe-agent).

Run it with the Python that has mini-swe-agent installed (``pip install mini-swe-agent``):

    memstore eval --agent "command:/path/to/venv/bin/python adapters/mini_swe_agent.py" \
        --agent-network host --agent-env OPENAI_API_KEY --agent-env MSWEA_MODEL_NAME

It reads the task file ($MEMSTORE_TASK), gives mini-swe-agent the task, the memories the store
returned and a shell command for the memory tools (``python -m memstore.mcp.call TOOL JSON``,
over the session's MCP server), runs it in the working copy, and writes result.json: the
answer (CLI) or findings (review) from its submission, its token usage and cost, and its
trajectory. The model is $MSWEA_MODEL_NAME (a litellm name; default ``openai/gpt-4.1-mini``);
$MEMSTORE_MODEL_BASE_URL points it at another OpenAI-compatible endpoint.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no download of litellm's price list
os.environ.setdefault("MSWEA_COST_TRACKING", "ignore_errors")  # a model litellm has no price for costs 0
os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import yaml
from common import load_task, memory_command, outcome, prompt, session_dir, write_result
from minisweagent.agents.default import DefaultAgent
from minisweagent.config import builtin_config_dir
from minisweagent.environments.local import LocalEnvironment
from minisweagent.models.litellm_model import LitellmModel


def usage(trajectory: dict) -> dict:
    spent = {"input_tokens": 0, "output_tokens": 0, "cache_tokens": 0}
    for message in trajectory.get("messages", []):
        found = ((message.get("extra") or {}).get("response") or {}).get("usage") or {}
        spent["input_tokens"] += int(found.get("prompt_tokens") or 0)
        spent["output_tokens"] += int(found.get("completion_tokens") or 0)
        spent["cache_tokens"] += int(((found.get("prompt_tokens_details") or {}).get("cached_tokens")) or 0)
    cost = ((trajectory.get("info") or {}).get("model_stats") or {}).get("instance_cost") or 0.0
    return {**spent, "cost_usd": float(cost), "model": os.environ.get("MSWEA_MODEL_NAME", "openai/gpt-4.1-mini")}


def main() -> int:
    task = load_task()
    folder = session_dir()
    command = memory_command(task)
    tools = ""
    if command:
        tools = (
            f"Memory tool: {command}\n"
            'Run it as `<memory tool> TOOL \'JSON\'`: verify_memory {"memory_id"}, refresh_memory {"memory_id"}, '
            'retire_memory {"memory_id", "reason"}, store_memory {"subject", "fact", "citations": '
            '["path:line"], "reason"}, recent_memories {"limit"}.'
        )
    config = yaml.safe_load((builtin_config_dir / "default.yaml").read_text())
    model_kwargs = {"temperature": 0}
    if os.environ.get("MEMSTORE_MODEL_BASE_URL"):
        model_kwargs["api_base"] = os.environ["MEMSTORE_MODEL_BASE_URL"]
    model = LitellmModel(
        model_name=os.environ.get("MSWEA_MODEL_NAME", "openai/gpt-4.1-mini"),
        model_kwargs=model_kwargs,
        cost_tracking="ignore_errors",
    )
    env = LocalEnvironment(cwd=task["workdir"], timeout=60, env={"MEMSTORE_TASK": os.environ["MEMSTORE_TASK"]})
    trajectory_path = folder / "mini-trajectory.json"
    agent = DefaultAgent(
        model, env, **{**config["agent"], "output_path": trajectory_path, "step_limit": 30, "cost_limit": 0}
    )
    result: dict = {}
    try:
        finished = agent.run(prompt(task, memory_tools=tools))
        result.update(outcome(task, str(finished.get("submission") or "")))
    except Exception as exc:  # the endpoint failed: an infrastructure error, reported as such
        result["error"] = {"kind": "infrastructure", "message": f"{type(exc).__name__}: {exc}"[:3000]}
    if trajectory_path.is_file():
        result["usage"] = usage(json.loads(trajectory_path.read_text()))
        result["trajectory"] = str(trajectory_path)
    write_result(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
