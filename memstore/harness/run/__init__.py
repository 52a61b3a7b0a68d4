"""Running agents: the agent boundary, isolation, the trial loop and its audit, the runner.

Four rooms, from the ground up: `isolation` (sandbox, bounded processes, write budget, store guard, scratch
space), `boundary` (what an agent is handed, the agents registry, the command adapter, the MCP bridge), `play`
(the trial loop, its hand-off to the grading, the store audit) and `runner` (what to run, the pool, the
executors). Beside them, `output`: what a unit is (`Unit`, its `Arm`) and what it gives back (`RunOutput`,
the records of `memstore.harness.records`).
"""

from memstore.harness.run.boundary import (
    AGENT_SCHEMES,
    AGENTS,
    Agent,
    AgentSession,
    CommandAgent,
    Hit,
    Limits,
    PullRequest,
    TaskView,
    Tools,
    Usage,
    agent_declares,
    agent_role,
    arm_role,
    make_agent,
    register_agent,
    split_params,
    with_params,
)
from memstore.harness.run.isolation import (
    DEFAULT_TIMEOUT,
    AgentRuntime,
    Network,
    SandboxMode,
    gunzip_bounded,
    read_bounded,
    resolve_mode,
    run_isolated,
)
from memstore.harness.run.output import Arm, RunOutput, Unit
from memstore.harness.run.play import Grading, GradingFactory, Played, kept_world, run_unit
from memstore.harness.run.runner import (
    Declared,
    RunConfig,
    check_config,
    declared,
    fitted_workers,
    iter_arms,
    merge_outputs,
    run,
    units,
)

__all__ = [
    "AGENTS",
    "AGENT_SCHEMES",
    "DEFAULT_TIMEOUT",
    "Agent",
    "AgentRuntime",
    "AgentSession",
    "Arm",
    "CommandAgent",
    "Declared",
    "Grading",
    "GradingFactory",
    "Hit",
    "Limits",
    "Network",
    "Played",
    "PullRequest",
    "RunConfig",
    "RunOutput",
    "SandboxMode",
    "TaskView",
    "Tools",
    "Unit",
    "Usage",
    "agent_declares",
    "agent_role",
    "arm_role",
    "check_config",
    "declared",
    "fitted_workers",
    "gunzip_bounded",
    "iter_arms",
    "kept_world",
    "make_agent",
    "merge_outputs",
    "read_bounded",
    "register_agent",
    "resolve_mode",
    "run",
    "run_isolated",
    "run_unit",
    "split_params",
    "units",
    "with_params",
]
