"""What a fact says, read out of free text: the code it names, the values it states, and what it
says of them, whatever the sentence around them.

A memory's fact is prose an agent wrote: "`find_dotenv` starts from the working directory
(usecwd=True)", "Unless you pass --quote, `dotenv set` quotes in auto mode", "The lint env runs
mypy six times". The verifier does not parse sentence shapes. It reads the fact as a person skims
it for what can be checked against code:

- *mentions*: each name of code (backticked, dotted, CamelCase, snake_case, CONSTANT, ``--option``,
  a call, a file name) and each value (a number with its unit, a quoted string, a URL, a version or
  a pin, a flag, a literal in a code span), with where it stands in the fact, so a correction
  replaces exactly the text that stated it;
- *words*: its content words, stemmed, with their positions (what a value is said of is named near
  it);
- *negated* mentions and words: those inside "no", "not", "never", "without", "nothing", "n't"
  (the fact says the code does *not* have them);
- *cues*: what the fact says of the values (a default, read from the environment, one platform,
  deprecated, raises, returns, an order, a complete list, a count, things that must match).

A reworded fact names the same code and states the same values, so it reads the same here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from memstore.verify.mentions import COUNT_NOUN, Mention, MentionKind, find_mentions
from memstore.verify.words import negated_spans, word_stems

__all__ = ["Cue", "Reading", "Word", "read_fact"]


class Cue(StrEnum):
    DEFAULT = "default"
    ENVIRONMENT = "environment"
    PLATFORM = "platform"
    DEPRECATED = "deprecated"
    RAISES = "raises"
    RETURNS = "returns"
    ORDER = "order"
    COMPLETE = "complete"  # only, exactly, all, "the X are A, B and C"
    COUNT = "count"  # a number of things: "six times", "8 projects"
    MATCH = "match"  # must match, kept in sync, the same in both
    UNIVERSAL = "universal"  # always, every, never, regardless, unconditionally


@dataclass(frozen=True, slots=True)
class Word:
    """A content word of the fact, stemmed, with its position and whether it is negated."""

    stem: str
    start: int
    negated: bool


@dataclass(frozen=True)
class Reading:
    """What `read_fact` found in a fact."""

    fact: str
    mentions: tuple[Mention, ...]
    words: tuple[Word, ...]
    cues: frozenset[Cue]

    @property
    def names(self) -> tuple[Mention, ...]:
        return tuple(m for m in self.mentions if m.kind is MentionKind.NAME)

    @property
    def values(self) -> tuple[Mention, ...]:
        return tuple(m for m in self.mentions if m.kind is not MentionKind.NAME)

    def near(self, mention: Mention, reach: int = 48) -> frozenset[str]:
        """The stems of the words within ``reach`` characters of a mention (what it is said of)."""
        return frozenset(w.stem for w in self.words if mention.start - reach <= w.start <= mention.end + reach)

    @property
    def stems(self) -> frozenset[str]:
        return frozenset(w.stem for w in self.words)


@lru_cache(maxsize=16384)
def read_fact(fact: str) -> Reading:
    """The mentions, words and cues of a fact (see the module docstring)."""
    fact = fact[:8000]  # a fact is at most 4,000 characters; anything longer is read in part
    mentions = find_mentions(fact)
    negated = negated_spans(fact)
    words = tuple(Word(s, at, any(a <= at < b for a, b in negated)) for s, at in word_stems(fact))
    return Reading(fact, mentions, words, _cues(fact, mentions))


# -- cues -----------------------------------------------------------------------------------------

_CUES: tuple[tuple[Cue, re.Pattern[str]], ...] = (
    (
        Cue.DEFAULT,
        re.compile(
            r"(?i)\bdefault"
            r"|\bunless (?:you |it is |one |the caller )?(?:pass|give|set|specif|overrid|provid|turn|configur|chang)"
            r"|\bif (?:not|none is|nothing is|no \w+ is) (?:given|passed|set|specified|provided)"
            r"|\bwhen (?:omitted|not given|not passed|not set|unset)|\bout of the box|\bfalls? back to"
            r"|\bleft (?:unset|out)|\bby itself\b|\bomitted\b"
        ),
    ),
    (
        Cue.ENVIRONMENT,
        re.compile(
            r"(?i)\benv(?:ironment)?(?:\s+|-)?var|\bfrom (?:the )?env(?:ironment)?\b|\bos\.environ|\bgetenv"
            r"|\benvironment\b|\$[A-Z_]{2,}"
        ),
    ),
    (Cue.PLATFORM, re.compile(r"(?i)\b(?:windows|linux|macos|mac os|darwin|posix|unix|win32)\b")),
    (Cue.DEPRECATED, re.compile(r"(?i)\bdeprecat|\bno longer used\b|\bunused\b|\bobsolete\b|\blegacy\b|\bdead code\b")),
    (Cue.RAISES, re.compile(r"(?i)\braise|\bthrow|\berrors? (?:out|with)\b|\bfails? with\b")),
    (Cue.RETURNS, re.compile(r"(?i)\breturn|\byields?\b|\bgives back\b|\bhands? back\b")),
    (
        Cue.ORDER,
        re.compile(
            r"(?i)\bbefore\b|\bafter\b|\bfirst\b|\bthen\b|\bfollowed by\b|\border\b|\bprecedes?\b|\blast\b|\bsorted\b"
        ),
    ),
    (
        Cue.COMPLETE,
        re.compile(
            r"(?i)\bonly\b|\bexactly\b|\bthe (?:full|whole|complete) (?:list|set)\b|\bnothing else\b|\bno other\b"
            r"|\bsole\b|\bsingle\b|\ball of\b|\bjust\b"
        ),
    ),
    (
        Cue.MATCH,
        re.compile(
            r"(?i)\bmatch|\bin sync\b|\bsame (?:value|version|name|list|number)|\bmirror"
            r"|\bkeep (?:the|them|both|these)\b.*\b(?:equal|identical|same|aligned)|\bagree\b|\bequal\b|\bidentical\b"
            r"|\bmust change together\b"
        ),
    ),
)


def _cues(fact: str, mentions: tuple[Mention, ...]) -> frozenset[Cue]:
    prose = fact
    for m in mentions:  # what code is named is no cue (``raise_error_if_not_found`` raises nothing)
        if m.kind in {MentionKind.NAME, MentionKind.CODE, MentionKind.STRING, MentionKind.URL}:
            prose = prose[: m.start] + " " * (m.end - m.start) + prose[m.end :]
    found = {cue for cue, pattern in _CUES if pattern.search(prose)}
    if any(m.kind is MentionKind.NUMBER and COUNT_NOUN.match(fact[m.end :]) for m in mentions):
        found.add(Cue.COUNT)
    return frozenset(found)
