"""Every built-in agent: the stubs and the reference LLM agent.

The stubs (`stubs`: the careful reader and the agents that trust, verify or ignore memory; their
program, `program`, its craft with a repository, `craft`, and its reading rules, `reading`), seeded by
`StubParams` (`params`). `memstore.agents.llm` is a tool-calling loop over any OpenAI-compatible
chat-completions endpoint (``--agent llm:MODEL``); its prompts are package data under ``prompts/``,
versioned, and its two prompts of a session (`system_prompt`, `task_prompt`) are what memstore's
inspect task hands inspect's model. Each is a built-in of the ``memstore.agents`` entry-point group.
"""

from memstore.agents.llm import PROMPT_VERSION, system_prompt, task_prompt
from memstore.agents.params import StubParams
from memstore.agents.program import Known, Program
from memstore.agents.stubs import (
    BlindTrustingAgent,
    JitVerifyAgent,
    NoMemoryAgent,
    StubAgent,
    TrustingAgent,
    refused_for_instructions,
)

__all__ = [
    "PROMPT_VERSION",
    "BlindTrustingAgent",
    "JitVerifyAgent",
    "Known",
    "NoMemoryAgent",
    "Program",
    "StubAgent",
    "StubParams",
    "TrustingAgent",
    "refused_for_instructions",
    "system_prompt",
    "task_prompt",
]
