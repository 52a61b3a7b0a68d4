"""A scripted model endpoint: an OpenAI-compatible chat-completions server that replays scripts.

A stand-in for a language model, for tests and demonstrations with no model and no network
(``python -m memstore.testing.scripted_model SCRIPT [--port N]``). It is not a model: it
answers each request with the next turn of the conversation its script names, so an agent's
plumbing (tool calls, memory over MCP, edits, usage accounting, transcripts) can be run end
to end and checked. Nothing it produces is a measurement of any model.

A script is JSON::

    {"conversations": [
        {"match": "Bump the API version",            # a substring of the request's messages
         "turns": [
            {"tool_calls": [{"name": "recent_memories", "arguments": {"limit": 10}}]},
            {"tool_calls": [{"name": "verify_memory", "arguments": {"memory_id": "{{re:mem_[0-9a-z]+}}"}}]},
            {"content": "Done."},                     # a plain reply
            {"error": 503}                            # the endpoint fails (an infrastructure error)
         ]}]}

The turn is chosen without state: it is the number of assistant messages already in the
request, so concurrent sessions never mix. In arguments, ``{{re:PATTERN}}`` is replaced by the
last match of PATTERN in the conversation's user messages and tool results (a memory id the agent was shown, say);
``{{task:KEY}}`` by a ``KEY: value`` line of the first user message. Usage is counted as one
token per four characters, so it is repeatable. Requests are logged (``--log FILE``) as JSON
lines.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = ["ScriptedModel", "serve"]

_PLACEHOLDER = re.compile(r"\{\{(re|task):(.+?)\}\}(?!\})")


def _text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


class ScriptedModel:
    """The conversations of a script, and how a request picks its next turn."""

    def __init__(self, script: Mapping[str, Any]) -> None:
        conversations = script.get("conversations")
        if not isinstance(conversations, list) or not conversations:
            raise ValueError("a script needs a non-empty 'conversations' list")
        for number, conversation in enumerate(conversations):
            if not isinstance(conversation.get("match"), str) or not isinstance(conversation.get("turns"), list):
                raise ValueError(f"conversation {number}: needs 'match' (text) and 'turns' (a list)")
        self.conversations: list[dict[str, Any]] = list(conversations)
        self.log: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    @classmethod
    def from_file(cls, path: Path) -> ScriptedModel:
        return cls(json.loads(path.read_text(encoding="utf-8")))

    def answer(self, request: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        """The HTTP status and body for a chat-completions request."""
        messages: Sequence[Mapping[str, Any]] = request.get("messages") or []
        said = "\n".join(_text(m) for m in messages if m.get("role") in {"system", "user"})
        conversation = next((c for c in self.conversations if c["match"] in said), None)
        turn_number = sum(1 for m in messages if m.get("role") == "assistant")
        with self._lock:
            self.log.append({"match": conversation and conversation["match"], "turn": turn_number})
        if conversation is None:
            return 400, {"error": {"message": "no conversation of the script matches this request", "type": "script"}}
        turns = conversation["turns"]
        turn = turns[turn_number] if turn_number < len(turns) else {"content": "(the script has ended)"}
        if "error" in turn:
            return int(turn["error"]), {"error": {"message": f"scripted failure {turn['error']}", "type": "script"}}
        message: dict[str, Any] = {"role": "assistant", "content": turn.get("content")}
        if turn.get("tool_calls"):
            message["tool_calls"] = [
                {
                    "id": f"call_{turn_number}_{index}",
                    "type": "function",
                    "function": {
                        "name": call["name"],
                        "arguments": json.dumps(_fill(call.get("arguments", {}), messages)),
                    },
                }
                for index, call in enumerate(turn["tool_calls"])
            ]
        prompt_chars = sum(len(_text(m)) + len(json.dumps(m.get("tool_calls") or "")) for m in messages)
        reply_chars = len(json.dumps(message))
        usage = {
            "prompt_tokens": prompt_chars // 4,
            "completion_tokens": reply_chars // 4,
            "total_tokens": prompt_chars // 4 + reply_chars // 4,
            "prompt_tokens_details": {"cached_tokens": 0},
        }
        body = {
            "id": f"chatcmpl-scripted-{turn_number}",
            "object": "chat.completion",
            "created": 0,
            "model": str(request.get("model", "scripted")),
            "choices": [
                {"index": 0, "message": message, "finish_reason": "tool_calls" if turn.get("tool_calls") else "stop"}
            ],
            "usage": usage,
        }
        return 200, body


def _fill(value: Any, messages: Sequence[Mapping[str, Any]]) -> Any:
    """``value`` with its placeholders filled from the conversation."""
    if isinstance(value, dict):
        return {k: _fill(v, messages) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, messages) for v in value]
    if not isinstance(value, str):
        return value
    tool_text = "\n".join(_text(m) for m in messages if m.get("role") in {"user", "tool"})
    first_user = next((_text(m) for m in messages if m.get("role") == "user"), "")

    def replace(match: re.Match[str]) -> str:
        kind, argument = match.groups()
        if kind == "re":
            found = re.findall(argument, tool_text)
            return str(found[-1]) if found else ""
        line = re.search(rf"^{re.escape(argument)}:\s*(.*)$", first_user, re.MULTILINE)
        return line.group(1).strip() if line else ""

    return _PLACEHOLDER.sub(replace, value)


def _handler(model: ScriptedModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def _send(self, status: int, body: Mapping[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._send(
                    200, {"object": "list", "data": [{"id": "scripted", "object": "model", "owned_by": "memstore"}]}
                )
            else:
                self._send(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                request = json.loads(self.rfile.read(min(length, 64 * 1024 * 1024)))
            except ValueError:
                self._send(400, {"error": {"message": "the body is not JSON"}})
                return
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no such endpoint: {self.path}"}})
                return
            self._send(*model.answer(request))

    return Handler


@contextmanager
def serve(model: ScriptedModel, *, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Serve ``model`` in a thread; yields the base URL (``http://127.0.0.1:PORT/v1``)."""
    server = ThreadingHTTPServer((host, port), _handler(model))
    thread = threading.Thread(target=server.serve_forever, name="scripted-model", daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m memstore.testing.scripted_model", description=__doc__.split("\n")[0]
    )
    parser.add_argument("script", type=Path)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        model = ScriptedModel.from_file(args.script)
    except (OSError, ValueError) as exc:
        print(f"scripted_model: {exc}", file=sys.stderr)
        return 2
    with serve(model, host=args.host, port=args.port) as url:
        print(url, flush=True)
        threading.Event().wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
