"""Reference agents: real agents, as opposed to the harness's stub programs.

`memstore.agents.llm` is a tool-calling loop over any OpenAI-compatible chat-completions
endpoint (``--agent llm:MODEL``). Its prompts are package data under ``prompts/``, versioned.
"""
