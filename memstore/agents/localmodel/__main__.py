"""``python -m memstore.agents.localmodel COMMAND...``: run COMMAND while the local model serves,
with ``OPENAI_BASE_URL`` naming it (so ``--agent 'llm:SmolLM2-135M-Instruct'`` reaches it and the
arm's name holds no port); COMMAND's exit status is this one's. Without a command: serve until
Ctrl-C, printing the base URL."""

from __future__ import annotations

import os
import subprocess
import sys

from memstore.agents.localmodel import serve
from memstore.errors import ConfigurationError


def main(argv: list[str]) -> int:
    try:
        with serve() as url:
            if not argv:
                print(f"serving SmolLM2-135M-Instruct at {url} (Ctrl-C stops it)", flush=True)
                try:
                    while True:
                        os.pause() if hasattr(os, "pause") else input()
                except KeyboardInterrupt:
                    return 0
            env = {**os.environ, "OPENAI_BASE_URL": url, "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY", "local")}
            return subprocess.run(argv, env=env, check=False).returncode
    except ConfigurationError as exc:
        print(f"memstore: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
