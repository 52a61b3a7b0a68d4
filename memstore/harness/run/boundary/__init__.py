"""The agent boundary: what an agent is, what it is handed for a session, and how it works.

The session an agent is handed (`session`: `AgentSession`, its `Tools` over a `gateway`), the agents
registry and agent specs (`agents`), the command adapter and its file contract (`command`,
`task_contract`), the MCP bridge (`mcp_bridge`), and an agent at work on one session (`working`).
"""

from memstore.harness.run.boundary.agents import (
    AGENT_SCHEMES,
    AGENTS,
    Agent,
    agent_declares,
    agent_role,
    arm_role,
    make_agent,
    portable_registrations,
    register_agent,
    restore_registrations,
    split_params,
    with_params,
)
from memstore.harness.run.boundary.command import CommandAgent, command_agent
from memstore.harness.run.boundary.gateway import Gateway, Usage
from memstore.harness.run.boundary.mcp_bridge import McpLaunch
from memstore.harness.run.boundary.session import AgentSession, Hit, Limits, PullRequest, TaskView, Tools
from memstore.harness.run.boundary.task_contract import result_schema, task_schema, validate_result, validate_task
from memstore.harness.run.boundary.working import work

__all__ = [
    "AGENTS",
    "AGENT_SCHEMES",
    "Agent",
    "AgentSession",
    "CommandAgent",
    "Gateway",
    "Hit",
    "Limits",
    "McpLaunch",
    "PullRequest",
    "TaskView",
    "Tools",
    "Usage",
    "agent_declares",
    "agent_role",
    "arm_role",
    "command_agent",
    "make_agent",
    "portable_registrations",
    "register_agent",
    "restore_registrations",
    "result_schema",
    "split_params",
    "task_schema",
    "validate_result",
    "validate_task",
    "with_params",
    "work",
]
