"""The judge of claims the cited code does not make.

A memory can name the right code and say something of it that the code does not do: that a value
is read from an environment variable, that a result is cached, that a write holds a lock, that a
call raises, that a setting applies on one platform only, that a comparison ignores case. Each
such claim names a mechanism, and the mechanism leaves marks in code (``os.environ``,
``lru_cache``, ``Lock``, ``raise``, ``sys.platform``, ``lower()``). When the fact claims one and the
cited code, the definition around it and its decorators show none of its marks (read as they were
when the memory was written), the claim is refuted: unsupported.

The older exact checks of `memstore.verify.predicates` (a name's assignment is a literal, a body
raises no such error, a parameter is read) run first. A claim they could not check (a package too
large to scan) is not refuted: the verdict another judge gives says it was not checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memstore.verify.evidence import Evidence
from memstore.verify.judges.case import Case
from memstore.verify.predicates import refuted_claim
from memstore.verify.verdict import Verdict, VerdictStatus
from memstore.verify.words import negated_spans

__all__ = ["MECHANISMS", "Mechanism", "Refuted"]


@dataclass(frozen=True)
class Mechanism:
    """A claim a fact can make of code, and the marks code that does it leaves.

    Attributes:
        name: what the fact claims, in a few words ("reads the environment").
        claim: the fact's words that claim it.
        marks: what such code says (any one of them is enough to leave the claim standing).
    """

    name: str
    claim: re.Pattern[str]
    marks: re.Pattern[str]


MECHANISMS: tuple[Mechanism, ...] = (
    Mechanism(
        "reads an environment variable",
        re.compile(
            r"(?i)\benv(?:ironment)?[ -]?var(?:iable)?s?\b"
            r"|\b(?:from|in|via|through) (?:the |an? )?environment(?![.\w-])"
            r"|\b(?:reads?|taken|loaded|comes?) from (?:the )?env\b|\bos\.environ\b|(?-i:\$[A-Z][A-Z0-9_]{2,})"
            r"|(?-i:\bexport(?:ing|ed|s)?\s+`?[A-Z][A-Z0-9]*_[A-Z0-9_]+)|\benvironment (?:override|setting|value)s?\b"
        ),
        re.compile(
            r"environ|getenv|process\.env|ENV\[|\benv\b|Getenv|envvar|env_var|os\.Environ|System\.getenv",
            re.IGNORECASE,
        ),
    ),
    Mechanism(
        "caches or memoises",
        re.compile(
            r"(?i)\b(?:caches?|cached|caching|memoi[sz]e[sd]?|memoi[sz]ation|lru_cache"
            r"|only re-?(?:formats|computes|reads) (?:it )?once)\b"
        ),
        re.compile(
            r"cache|memo|_last|lru|@functools|@cached|setattr|(?:self|this)\._\w+\s*(?:=[^=]|\)|$)",
            re.IGNORECASE | re.MULTILINE,
        ),
    ),
    Mechanism(
        "holds a lock",
        re.compile(
            r"(?i)\b(?:locks?|locked|locking|thread[- ]safe|threadsafe|mutex|serializ(?:ed|es)|synchroni[sz]ed?"
            r"|exclusive lock|flock|fcntl)\b"
        ),
        re.compile(r"lock|mutex|acquire|synchroni|fcntl|flock|semaphore|threading|atomic", re.IGNORECASE),
    ),
    Mechanism(
        "applies on one platform only",
        re.compile(
            r"(?i)\bonly on (?:windows|linux|macos|mac|posix|unix|darwin|bsd)\b|\bon (?:windows|linux|macos) only\b"
            r"|\b(?:windows|linux|macos)[- ]only\b"
        ),
        re.compile(
            r"platform|os\.name|win32|darwin|linux|windows|sys\.platform|IS_WIN|is_windows|\bnt\b|uname|os\.type",
            re.IGNORECASE,
        ),
    ),
    Mechanism(
        "ignores case",
        re.compile(r"(?i)\bcase[- ]insensitive(?:ly)?\b|\bignor(?:es|ing) case\b|\blower-?cases? both\b|\bcasefold"),
        re.compile(
            r"lower|upper|casefold|ignorecase|IGNORECASE|re\.I\b|toLowerCase|toUpperCase|localeCompare|/i\b",
            re.IGNORECASE,
        ),
    ),
    Mechanism(
        "retries",
        re.compile(
            r"(?i)\bretr(?:y|ies|ied|ying)\b[^.;]{0,40}?\b(?:up to|at most) (?:\d+|two|three|four|five)\b"
            r"|\bretries \d+ times\b|\btries again\b|\bretry loop\b"
        ),
        re.compile(r"retr|attempt|for\s|while\s|range\(", re.IGNORECASE),
    ),
)


class Refuted:
    """Unsupported when the code shows that what the fact says of it is not so."""

    name = "refuted"

    def decide(self, case: Case) -> Verdict | None:
        found = refuted_claim(case.memory.fact, [c.path for c in case.readable], case.codebase)
        if found is not None and not found.refuted:
            case.unchecked.append(found.reason)  # the verdict, whoever gives it, says so
        refuted = found.reason if found is not None and found.refuted else None
        if refuted is None:
            refuted = _unmarked(case) or _contradicted_by_code(case)
        if refuted is None:
            return None
        return Verdict(VerdictStatus.UNSUPPORTED, case.checks, reason=f"the code refutes the fact: {refuted}")


_IGNORED = re.compile(
    r"(?i)\bnever (?:reads|uses|looks at) (?:its |the )?`?(?P<a>[A-Za-z_]\w*)`?"
    r"|\bpassing `?(?P<b>[A-Za-z_]\w*)`? (?:to \S+ )?has no effect"
    r"|`?(?P<c>[A-Za-z_]\w*)`? (?:argument |parameter )?is ignored"
    r"|\bignores (?:its |the )?`?(?P<d>[A-Za-z_]\w*)`?"
)
_RAISES = re.compile(r"\b(?:raises?|throws?|fails? with)\s+(?:an? )?`?(?P<error>[A-Z]\w*(?:Error|Exception))`?")


def _contradicted_by_code(case: Case) -> str | None:
    """A claim the definition around the citation shows the opposite of: a parameter it says is
    ignored that the body reads; an error it says is raised that the body never raises."""
    fact = case.memory.fact
    if not _IGNORED.search(fact) and not _RAISES.search(fact):
        return None
    negated = negated_spans(fact)
    for ev in case.evidence:
        scope = ev.then_scope
        if scope is None:
            continue
        body = "\n".join(scope.lines[1:])
        for match in _IGNORED.finditer(fact):
            name = next(g for g in match.groups() if g)
            if any(a <= match.start() < b for a, b in negated) or len(name) < 2:
                continue
            if re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", body):
                return f"the body around the citation reads {name}: it is not ignored"
    for match in _RAISES.finditer(fact):
        if any(a <= match.start() < b for a, b in negated):
            continue
        error = match.group("error")
        code = "\n".join(_read(ev) or "" for ev in case.evidence)
        files = "\n".join(case.file_then(ev) for ev in case.evidence)
        if code and not re.search(r"\b(?:raise|throw)\b", code) and error not in files:
            return f"nothing around the citation raises anything, {error} least of all"
    return None


def _unmarked(case: Case) -> str | None:
    """The mechanism the fact claims that no cited code shows a mark of, said as a sentence."""
    fact = case.memory.fact
    negated = negated_spans(fact)
    claimed = [
        m for m in MECHANISMS
        if any(not any(a <= found.start() < b for a, b in negated) for found in m.claim.finditer(fact))
    ]  # fmt: skip
    if not claimed:
        return None
    texts = [_read(ev) for ev in case.evidence]
    if not texts or any(t is None for t in texts):
        return None  # a citation with nothing to read then: no way to tell
    code = "\n".join(t for t in texts if t)
    for mechanism in claimed:
        if not mechanism.marks.search(code):
            return f"the fact says it {mechanism.name}, and the cited code shows nothing that does"
    return None


def _read(ev: Evidence) -> str | None:
    """The code a claim about a citation is judged on: the cited statements as they were, the
    definition around them with the lines just above it (its decorators), and their headers."""
    if ev.then is None:
        return None
    parts = [ev.then.text, *(header for _, header in ev.then_parents)]
    if ev.then_scope is not None:
        parts.append(ev.then_scope.text)
    return "\n".join(parts)
