"""Running agents: the agent boundary, the built-in agents, the command adapter, the trial loop, the pool."""
