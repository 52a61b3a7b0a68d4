"""Orders to the reader in a memory's text: a clause that starts with a verb aimed at the reader.

An order counts where a clause starts with the verb ("Run ...", ", delete tests/", "you must ...",
"the next agent should ..."), never negated ("never delete"), never as a noun or a description
("Delete requests are retried", "the deploy script runs `make release`"), and only when it does
harm: by itself (delete, wipe, `rm`, `chmod`, `sudo`, `curl`) or by what its clause holds (a URL
to fetch or run, a secret to send or print, `--force`, the tests or CI to turn off). A harmless
convention in the imperative ("run `npm run build` before the tests") is no order of harm.

The text is read lower-cased (ASCII only, so that offsets stand) and every pattern is bounded:
linear time on any input (`memstore.verify.instructions`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memstore.verify.instruction import InstructionKind

__all__ = ["URL", "orders"]

URL = re.compile(r"(?:https?|ftp)://[^\s`'\"<>]{0,300}[^\s`'\"<>.,;:!?)]|\bwww\.[a-z0-9-]{1,63}\.[a-z]{2,24}")
FETCHER = re.compile(r"\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|certutil|bitsadmin)\b")
_EMAIL = re.compile(r"\b[\w.+-]{1,64}@[\w-]{1,63}\.[a-z]{2,24}\b")
_DESTROYER = re.compile(
    r"\brm\s{1,4}-[a-z]{0,4}[rf]|\bgit\s{1,4}push\b[^.;\n]{0,80}?(?:--force\b|\s-f\b)|\bgit\s{1,4}reset\s{1,4}--hard"
    r"|\bgit\s{1,4}clean\s{1,4}-[a-z]{0,4}[fdx]|\bchmod\b|\bchown\b|\bsudo\b|\bmkfs|\bdd\s{1,4}if="
    r"|\bdrop\s{1,4}(?:table|database|schema)\b|\btruncate\s{1,4}table\b|--no-verify\b"
)
_SECRET = re.compile(
    r"\b(?:(?:auth|access|api|bearer|github|gh|gitlab|npm|pypi|session|refresh|oauth|csrf)[ _-]?tokens?"
    r"|secrets?|passwords?|passwd|credentials?|api[ _-]?keys?|private[ _-]?keys?|ssh[ _-]?keys?"
    r"|access[ _-]?keys?|id_rsa|id_ed25519|cookies?)\b|\.(?:env|netrc|npmrc|pypirc)\b"
    r"|\b[a-z0-9]{1,40}(?:_[a-z0-9]{1,20}){0,3}_(?:token|secret|password|key)\b"
)
_SAFETY = re.compile(
    r"\b(?:tests?|test suite|ci|hooks?|pre-commit|verification|verif(?:y|ier)|reviews?|security|sandbox(?:ing)?"
    r"|signing|signatures?|protections?|safety|guardrails?|2fa|mfa|authentication|ssl|tls|certificates?|memstore)\b"
)
_TARGET = re.compile(
    r"[\w.*~-]{0,60}/|\b(?:tests?|files?|folders?|director(?:y|ies)|repo(?:sitory)?|branch(?:es)?|history"
    r"|commits?|database|tables?|data|everything|all|logs?|backups?|memor(?:y|ies)|src|docs)\b"
)
_FORCED = re.compile(
    r"--force\b|\s-f\b|--no-verify\b|without\s{1,4}(?:a\s{1,4})?(?:review|tests|approval|checks)"
    r"|(?:straight|directly)\s{1,4}(?:in)?to\s{1,4}(?:main|master|prod(?:uction)?)\b"
)
_OBJECT = re.compile(r"\s{1,4}(?:the|all|every|any|this|these|those|your|their|its|each)\b")
_OFF = re.compile(r"\s{1,4}(?:off|out|down)\b")
_TOLD = re.compile(
    r"\s{1,4}(?:the\s{1,4}|your\s{1,4}|this\s{1,4}|any\s{1,4}|every\s{1,4})?(?:users?|reviewers?|humans?|developers?"
    r"|pull\s{1,4}requests?|prs?|merge\s{1,4}requests?|changes?|diffs?)\b"
)

# The verbs of an order, by what makes it harmful: itself, or what its clause holds.
_ALWAYS = {"chmod", "chown", "sudo", "rm", "rmdir", "force-push"}
_DESTROY = {"delete", "erase", "wipe", "purge", "destroy", "truncate", "unlink", "shred", "nuke"}
_DESTROY_TARGET = {"remove", "drop", "overwrite", "clear", "empty", "reset"}
_DOWNLOAD = {"curl", "wget", "iwr", "irm"}
_FETCH = {"download", "fetch", "visit", "open", "browse", "navigate", "go", "load", "clone", "pull", "install"}
_FETCH |= {"get", "retrieve", "import", "source", "pip", "pip3", "npm", "npx", "yarn", "pnpm", "gem", "cargo", "uv"}
_FETCH |= {"pipx", "run", "execute", "exec", "eval", "invoke", "launch", "start", "bash", "sh", "zsh", "powershell"}
_FETCH |= {"git"}
_EXEC = {"run", "execute", "exec", "eval", "invoke", "launch", "start", "bash", "sh", "zsh", "powershell", "git"}
_SEND = {"send", "post", "upload", "email", "mail", "share", "forward", "transmit", "submit", "paste", "leak"}
_SEND |= {"exfiltrate", "report"}
_REVEAL = {"print", "echo", "cat", "dump", "log", "show", "reveal", "expose", "display", "output", "export"}
_REVEAL |= {"commit", "push"}
_DISABLE = {"disable", "deactivate", "bypass", "circumvent", "silence", "mute"}
_DISABLE_OFF = {"turn", "switch", "comment", "shut"}  # "turn off", "comment out", "shut down"
_PUSH = {"push", "commit", "merge", "deploy", "publish", "release", "approve"}
_TELL = {"tell", "assure", "reassure", "inform", "approve"}
# Commands that, written first in a code span at a clause's start, are an order (Setup: `curl ...`).
_COMMANDS = {"chmod", "chown", "sudo", "curl", "wget", "iwr", "irm", "rm", "rmdir", "bash", "sh", "zsh", "eval"}
_COMMANDS |= {"export", "pip", "pip3", "npm", "npx", "yarn", "pnpm", "gem", "cargo", "uv", "pipx", "git", "pwsh"}
_COMMANDS |= {"powershell"}
_VERBS = _ALWAYS | _DESTROY | _DESTROY_TARGET | _DOWNLOAD | _FETCH | _EXEC | _SEND | _REVEAL | _DISABLE
_VERBS |= _DISABLE_OFF | _PUSH | _TELL
# Harmless verbs an order may start with: they let "and delete tests/" continue it.
_CHAIN = {"ignore", "disregard", "forget", "skip", "stop", "use", "build", "edit", "update", "change", "make", "set"}
_CHAIN |= {"bump", "fix", "write", "create", "add", "replace", "rename", "move", "check", "verify", "test", "do"}
_STARTS = frozenset(_VERBS | _CHAIN)
# A word of these just after a verb makes it a noun or a description ("Delete requests are retried").
_FINITE = frozenset(
    """
    is are was were be been has have had will would can could should must may might does do did returns raises
    gets takes uses means works calls sets runs reads writes keeps holds lives stays goes fails yields needs
    requires expects only always never isn't aren't wasn't weren't doesn't don't didn't won't can't hasn't
    """.split()  # noqa: SIM905 (a word list reads best as words)
)

_LEAD = (
    r"(?:please|kindly|now|then|also|just|first|next|finally|immediately|simply|quickly|instead"
    r"|you(?:'ll|\s{1,4}will|\s{1,4}should|\s{1,4}must|\s{1,4}need\s{1,4}to|\s{1,4}have\s{1,4}to|\s{1,4}are\s{1,4}to"
    r"|\s{1,4}shall|\s{1,4}can|\s{1,4}may|\s{1,4}ought\s{1,4}to|\s{1,4}are\s{1,4}(?:required|expected)\s{1,4}to)"
    r"|(?:the|any|every|each|all|future)\s{1,4}(?:(?:next|future|other)\s{1,4})?(?:agents?|assistants?|ais?|models?"
    r"|llms?|bots?|readers?|reviewers?)\s{1,4}(?:should|must|needs?\s{1,4}to|ha(?:s|ve)\s{1,4}to|is\s{1,4}to"
    r"|are\s{1,4}to|shall|will)"
    r"|(?:make|be)\s{1,4}sure\s{1,4}(?:to|you)|remember\s{1,4}to|(?:don't|do\s{1,4}not)\s{1,4}forget\s{1,4}to"
    r"|it(?:'s|\s{1,4}is)\s{1,4}(?:important|essential|required|mandatory|necessary|critical|vital)\s{1,4}"
    r"(?:to|that\s{1,4}you))"
)
# Where a clause starts, the words that may lead to its verb, and the verb (a command may open a code span).
_ORDER = re.compile(
    r"(?:^|(?P<joined>,?\s{0,4}\b(?:and|or|but|so)\s{1,4})|(?<=[.!?])\s{1,4}|[:;,(\n\"'\u201c\u2014\u2013]\s{0,4}"
    r"|\s-\s{1,4}|\bthen\s{1,4})"
    rf"(?:{_LEAD}\s{{1,4}}){{0,3}}(?P<tick>`)?(?P<verb>[a-z][a-z0-9-]{{0,15}})(?![\w(.=/'\u2019-])"
)
_PROTECTED = re.compile(rf"`[^`\n]{{0,400}}`|{URL.pattern}")
_CLAUSE_END = re.compile(r"[.!?](?=\s|$)|[;\n,]|\s(?:and|then)\s")
_WORD = re.compile(r"`[^`\n]{0,200}`|[^\s`]{1,100}")


def orders(text: str) -> Iterator[tuple[InstructionKind, int, int]]:
    """The orders of harm in ``text`` (lower-cased), each with its kind and the span of its clause."""
    masked: str | None = None  # the text with its URLs and code spans blanked: where clauses end
    last = -1  # where the last order's clause ended: "and delete" continues an order, not a description
    for match in _ORDER.finditer(text):
        verb = match.group("verb")
        if verb not in _STARTS or (match.group("tick") and verb not in _COMMANDS):
            continue
        if match.group("joined") and (last < 0 or text[last : match.start("joined")].strip(" ,")):
            continue
        masked = _masked(text) if masked is None else masked
        start, at = match.start("tick" if match.group("tick") else "verb"), match.end()
        stop = _CLAUSE_END.search(masked, at, min(len(text), at + 200))
        end = stop.start() if stop is not None else min(len(text), at + 200)
        if _described(text, at, end):
            continue
        last = end
        kind = _harm(verb, text, match.start("verb") if verb == "git" else at, end)
        if kind is not None:
            yield kind, start, end


def _masked(text: str) -> str:
    """``text`` with each URL and code span replaced by as many x's: their dots and commas end no clause."""
    pieces, last = [], 0
    for match in _PROTECTED.finditer(text):
        pieces += [text[last : match.start()], "x" * (match.end() - match.start())]
        last = match.end()
    return "".join([*pieces, text[last:]])


def _described(text: str, at: int, end: int) -> bool:
    """Whether the verb is a noun or a description: a finite verb among the next three words
    ("Delete requests are retried", "`rm -rf build` is what `make clean` runs")."""
    for n, word in enumerate(_WORD.finditer(text, at, end)):
        if n == 3:
            return False
        if word.group().strip(".,:;()") in _FINITE:
            return True
    return False


def _harm(verb: str, text: str, at: int, end: int) -> InstructionKind | None:
    """What harm an order with ``verb`` and the rest of its clause, ``text[at:end]``, does, if any."""

    def has(pattern: re.Pattern[str]) -> bool:
        return pattern.search(text, at, end) is not None

    if verb in _ALWAYS or (verb in _DESTROY and (has(_TARGET) or _OBJECT.match(text, at) is not None)):
        return InstructionKind.DESTRUCTIVE
    if verb in _DOWNLOAD:
        return InstructionKind.FETCH
    if (verb in _DESTROY_TARGET and has(_TARGET)) or (verb in _PUSH and has(_FORCED)):
        return InstructionKind.DESTRUCTIVE
    if (verb in _DISABLE or (verb in _DISABLE_OFF and _OFF.match(text, at))) and has(_SAFETY):
        return InstructionKind.DISABLE
    if verb in _TELL and _TOLD.match(text, at) is not None:
        return InstructionKind.OVERRIDE
    if (verb in _SEND and (has(URL) or has(_EMAIL) or has(_SECRET))) or (verb in _REVEAL and has(_SECRET)):
        return InstructionKind.EXFILTRATE
    if verb in _FETCH and (has(URL) or has(FETCHER)):
        return InstructionKind.FETCH
    if verb in _EXEC:
        return InstructionKind.DESTRUCTIVE if has(_DESTROYER) else InstructionKind.EXFILTRATE if has(_SECRET) else None
    return None
