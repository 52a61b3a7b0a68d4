"""An agent at work on one session: what it raises and what it writes past its budget fail that
session only.

An agent that raises is an ``agent_error`` with the exception's name and message. One that wrote
into its working copy past the session's write budget (`memstore.harness.run.isolation.writes`) is an
``agent_error`` too, with the reason, and what it wrote is discarded before the harness reads
any of it: nothing is committed, diffed or checked, and the next session finds the tree as the
repository has it (`memstore.verify.workspace.Workspace.discard`; what it had planted for git is
undone first, each a ``tampered`` event).
"""

from __future__ import annotations

from memstore.harness.records import EventKind
from memstore.harness.run.boundary.agents import Agent
from memstore.harness.run.boundary.session import AgentSession
from memstore.harness.run.isolation.writes import WRITE_BUDGET, WriteBudget, overrun, stamps
from memstore.verify import Workspace

__all__ = ["work"]


def work(agent: Agent, session: AgentSession, workspace: Workspace, budget: WriteBudget = WRITE_BUDGET) -> None:
    """Let ``agent`` work on ``session`` in ``workspace``; see the module docstring for how it fails."""
    tools = session.tools
    found = stamps(workspace.path)
    try:
        agent.work(session)
    except Exception as exc:
        tools.record(EventKind.AGENT_ERROR, "", f"the agent raised {type(exc).__name__}: {str(exc)[:300]}")
    over = overrun(workspace.path, found, budget)
    if over is not None:
        tools.record(EventKind.AGENT_ERROR, "", f"{over}; what it wrote was discarded")
        for undone in workspace.discard():
            tools.record(EventKind.TAMPERED, "", undone)
