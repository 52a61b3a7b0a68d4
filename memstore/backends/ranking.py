"""How the reference stores rank memories for a task: ``search()``'s weighting.

Retrieval by recency alone is blunt (the seeds): the memory a task needs may not be among the
newest. ``search(repo, query)`` ranks every memory the user may see by four signals, each
scaled to a known range and weighted (the weights are modelling choices, chosen so that a clear
match of the task's words decides, and the rest order near-ties; docs/store.md, "Search"):

- **relevance** (weight 1): BM25 (bm25s) of the query over the memory's subject, fact, reason
  and the paths it cites, identifiers whole and split (``api_version``, ``api``, ``version``),
  divided by the best match, so in [0, 1];
- **recency** (`RECENCY_WEIGHT`): 1 for the newest by ``recent()``'s order down to 0 for the oldest;
- **verification** (`VERIFIED_WEIGHT`): 1 for a memory refreshed since it was written (a
  verifier found its citations still true and refreshed it: the JIT verification's mark), else 0;
- **use** (`VOTES_WEIGHT`): the net of the users' votes on it (each user's latest counts once),
  squashed to (-1, 1) by ``tanh(net / 2)``: two users who found it wrong sink it below an
  equal match nobody voted on.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from memstore.model import Memory, Vote

__all__ = ["RECENCY_WEIGHT", "VERIFIED_WEIGHT", "VOTES_WEIGHT", "Weights", "net_votes", "rank"]

RECENCY_WEIGHT = 0.15  # recency breaks near-ties; it does not outvote a match
VERIFIED_WEIGHT = 0.1
VOTES_WEIGHT = 0.3
_SPLIT = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_WORD = re.compile(r"\w+")
_TOKENS = r"(?u)\b\w+\b"  # keep one-character tokens: the 7 of RETRY_LIMIT_7 tells it from RETRY_LIMIT_8


@dataclass(frozen=True)
class Weights:
    """How much each signal counts beside relevance (whose weight is 1)."""

    recency: float = RECENCY_WEIGHT
    verified: float = VERIFIED_WEIGHT
    votes: float = VOTES_WEIGHT


RELEVANCE_AND_RECENCY = Weights(verified=0.0, votes=0.0)  # the ``ranked:`` store's weighting


def terms(text: str) -> str:
    """Identifiers whole (``api_version``) and split (``api``, ``version``), lower-cased."""
    return " ".join([*(w.lower() for w in _WORD.findall(text)), *(p.lower() for p in _SPLIT.findall(text))])


def _document(memory: Memory) -> str:
    """The text a memory is found by: subject, fact, reason and the paths it cites."""
    return terms(" ".join([memory.subject, memory.fact, memory.reason, *(c.path for c in memory.citations)]))


def net_votes(votes: Iterable[Vote]) -> dict[str, int]:
    """Each memory's ups minus downs, a user's latest vote on it counting once."""
    latest: dict[tuple[str, str], Vote] = {}
    for vote in sorted(votes, key=lambda v: v.at):
        latest[(vote.memory_id, vote.author)] = vote
    net: dict[str, int] = {}
    for (memory_id, _), vote in latest.items():
        net[memory_id] = net.get(memory_id, 0) + (1 if vote.up else -1)
    return net


def _relevance(candidates: Sequence[Memory], query: str) -> list[float]:
    """Each candidate's BM25 score for ``query``, divided by the best (0 for no match)."""
    if not query.strip():
        return [0.0] * len(candidates)
    import bm25s  # NumPy's: loaded by the first search, not by every command that opens a store

    documents = [_document(m) for m in candidates]
    corpus = bm25s.tokenize(documents, stopwords="en", token_pattern=_TOKENS, show_progress=False)
    index = bm25s.BM25()
    index.index(corpus, show_progress=False)
    tokens = bm25s.tokenize([terms(query)], stopwords="en", token_pattern=_TOKENS, show_progress=False)
    if not tokens.ids or not tokens.ids[0]:  # nothing of the query is in any memory
        return [0.0] * len(candidates)
    ranked, values = index.retrieve(tokens, k=len(candidates), show_progress=False)
    found = {int(d): float(v) for d, v in zip(ranked[0], values[0], strict=True)}
    best = max(found.values(), default=0.0) or 1.0
    return [found.get(i, 0.0) / best for i in range(len(candidates))]


def rank(
    candidates: Sequence[Memory],
    query: str,
    *,
    votes: Mapping[str, int] | None = None,
    weights: Weights = Weights(),
) -> list[Memory]:
    """``candidates`` (newest first, as ``recent()`` gives them) best first for ``query``: the
    weighted sum of the module docstring's signals; ties keep the newest first."""
    count = len(candidates)
    if count == 0:
        return []
    relevance = _relevance(candidates, query)
    net = votes or {}
    scores = []
    for i, memory in enumerate(candidates):
        score = relevance[i] + weights.recency * (1 - i / count)
        if memory.refreshed_at > memory.created_at:
            score += weights.verified
        score += weights.votes * math.tanh(net.get(memory.id, 0) / 2)
        scores.append(score)
    order = sorted(range(count), key=lambda i: (-scores[i], i))
    return [candidates[i] for i in order]
