"""``ranked:///path/to.db``: the reference SQLite store plus relevance-ranked ``search()``.

The seeds note that retrieval by recency is blunt: the memory a task needs may not be among
the most recent. This store keeps every rule of the reference store and adds
``search(repo, query, ...)``: BM25 (bm25s) over each visible memory's subject, fact, reason
and citation paths, scaled to [0, 1] and fused with a small recency term, so a memory that
matches the task well surfaces even when it is old, and recency still breaks near-ties. The harness
hands an agent ``search(task)`` results whenever a store lists ``"search"``.
"""

from __future__ import annotations

import re

import bm25s

from memstore.access import Actor
from memstore.backends import StoreOptions, per_trial
from memstore.backends.base import MAX_RECENT_LIMIT, REFERENCE_CAPABILITIES, check_limit
from memstore.backends.sqlite import SqliteStore, parse_sqlite_uri, trial_file
from memstore.model import Memory, Surface, check_text, validate_repo
from memstore.uri import StoreURI

__all__ = ["RankedStore", "open_ranked"]

MAX_QUERY_CHARS = 100_000
RECENCY_WEIGHT = 0.15  # how much recency counts beside relevance: it breaks near-ties, it does not outvote a match
_SPLIT = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_WORD = re.compile(r"\w+")
_TOKENS = r"(?u)\b\w+\b"  # keep one-character tokens: the 7 of RETRY_LIMIT_7 tells it from RETRY_LIMIT_8


def _terms(text: str) -> str:
    """Identifiers whole (``api_version``) and split (``api``, ``version``), lower-cased."""
    return " ".join([*(w.lower() for w in _WORD.findall(text)), *(p.lower() for p in _SPLIT.findall(text))])


def _document(memory: Memory) -> str:
    """The text a memory is found by: subject, fact, reason and the paths it cites."""
    return _terms(" ".join([memory.subject, memory.fact, memory.reason, *(c.path for c in memory.citations)]))


class RankedStore(SqliteStore):
    """`SqliteStore` with `search`: BM25 fused with recency."""

    capabilities = REFERENCE_CAPABILITIES | {"search"}

    def search(self, repo: str, query: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        """The ``limit`` visible memories of ``repo`` that best match ``query`` (BM25 fused with recency)."""
        validate_repo(repo)
        check_limit(limit)
        check_text(query, "query", MAX_QUERY_CHARS, required=False)
        candidates = self.recent(repo, actor=actor, surface=surface, limit=MAX_RECENT_LIMIT)
        if not candidates or not query.strip():
            return candidates[:limit]
        corpus = bm25s.tokenize(
            [_document(m) for m in candidates], stopwords="en", token_pattern=_TOKENS, show_progress=False
        )
        index = bm25s.BM25()
        index.index(corpus, show_progress=False)
        tokens = bm25s.tokenize([_terms(query)], stopwords="en", token_pattern=_TOKENS, show_progress=False)
        documents, values = index.retrieve(tokens, k=len(candidates), show_progress=False)
        relevance = {int(d): float(v) for d, v in zip(documents[0], values[0], strict=True)}
        best = max(relevance.values(), default=0.0) or 1.0
        count = len(candidates)
        # Relevance first (BM25 scaled to [0, 1]); recency adds up to RECENCY_WEIGHT (candidates are newest first).
        fused = {i: relevance.get(i, 0.0) / best + RECENCY_WEIGHT * (1 - i / count) for i in range(count)}
        order = sorted(fused, key=lambda i: (-fused[i], i))
        return [candidates[i] for i in order[:limit]]


@per_trial(
    trial_file,
    hint="use '{scheme}:' (a private file per trial), or put {{scenario}}, {{trial}} and {{arm}} in the path",
)
def open_ranked(uri: str, options: StoreOptions) -> RankedStore:
    """Factory for ``ranked:`` URIs (paths as for ``sqlite:``; ``ranked://`` alone is in memory)."""
    path, _ = parse_sqlite_uri(uri) if StoreURI.parse(uri).path else (":memory:", {})
    return RankedStore(path, options)
