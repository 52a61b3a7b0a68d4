"""A file's text and lines as its language's own tools read them: the one rule for every reader.

A Python file is read as the interpreter reads it: decoded by its PEP 263 coding header or its
byte-order mark (``tokenize.detect_encoding``; UTF-8 without either), with ``\\r\\n``, ``\\r`` and
``\\n`` each ending a line, as its tokenizer counts lines. (``str.splitlines`` is not that rule:
it also ends lines at ``\\v``, ``\\f``, ``\\x1c``-``\\x1e``, ``\\x85``, ``\\u2028`` and ``\\u2029``,
which Python reads as characters of a line.) Every other file is read as git and its diffs count
lines: UTF-8, each line ended by ``\\n``, one ``\\r`` before it dropped (CRLF reads as LF), a lone
``\\r`` a character of its line. Bytes that do not decode become U+FFFD: nothing here raises on
what a file holds.

The verifier's codebases (`memstore.verify.codebase`), the miner, and the working copy the stub
agents' tools read (`memstore.verify.workspace`) all go through these functions, so a line
number means the same line to each of them, and a value reads the same.
"""

from __future__ import annotations

import io
import tokenize

from memstore.verify.tokens import Language, language_of

__all__ = ["decode", "encode", "file_lines", "is_python", "text_lines"]


def is_python(path: str) -> bool:
    """Whether ``path`` is read as Python (by its name: `memstore.verify.tokens.language_of`)."""
    return language_of(path) is Language.PYTHON


def _declared(head: bytes) -> str | None:
    """The encoding a Python file's first two lines declare (its BOM or coding header), or None
    when they declare none Python knows (then Python refuses the file; we read it as UTF-8)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(head).readline)
    except SyntaxError:  # an unknown encoding, or a header that contradicts the BOM
        return None
    return encoding


def decode(data: bytes, path: str) -> str:
    """The text of the file ``path`` whose bytes are ``data`` (a BOM is not part of the text)."""
    encoding = _declared(data) if is_python(path) else None
    if encoding is not None:
        try:
            return data.decode(encoding, errors="replace")
        except LookupError:  # a codec that is not a text encoding ("rot13")
            pass
    return data.decode("utf-8", errors="replace")


def encode(text: str, path: str) -> bytes:
    """The bytes to write for ``text`` as the file ``path``: a Python file in the encoding its own
    coding header declares (what `decode` reads back), any other file in UTF-8. A character the
    declared encoding lacks is written as its backslash escape (the same character, inside a
    string literal)."""
    if is_python(path):
        head = "\n".join(text.split("\n", 2)[:2]).encode("utf-8", errors="replace")
        encoding = _declared(head)
        if encoding is not None and encoding not in {"utf-8", "utf-8-sig"}:
            try:
                return text.encode(encoding, errors="backslashreplace")
            except LookupError:
                pass
    return text.encode("utf-8")


def text_lines(text: str, path: str) -> tuple[str, ...]:
    """The lines of ``text`` (without their line ends), counted as the tools of ``path``'s language count them."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if is_python(path):
            text = text.replace("\r", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if lines and lines[-1].endswith("\r"):  # a last line ended by a lone \r, in a file that is not Python
        lines[-1] = lines[-1][:-1]
    return tuple(lines)


def file_lines(data: bytes, path: str) -> tuple[str, ...]:
    """The lines of the file ``path`` whose bytes are ``data``: `decode`, then `text_lines`."""
    return text_lines(decode(data, path), path)
