"""``ranked:///path/to.db``: the reference SQLite store plus relevance-ranked ``search()``.

The seeds note that retrieval by recency is blunt: the memory a task needs may not be among
the most recent. This store keeps every rule of the reference store and adds
``search(repo, query, ...)`` ranked by relevance and recency alone (`memstore.backends.ranking`:
BM25 over each visible memory's subject, fact, reason and citation paths, scaled to [0, 1],
fused with a small recency term; no verification or votes), so a memory that matches the task
well surfaces even when it is old. The harness hands an agent ``search(task)`` results whenever
a store lists ``"search"``.
"""

from __future__ import annotations

from memstore.access import Actor
from memstore.backends import StoreOptions, per_trial
from memstore.backends.base import REFERENCE_CAPABILITIES
from memstore.backends.ranking import RELEVANCE_AND_RECENCY
from memstore.backends.sqlite import SqliteStore, parse_sqlite_uri, trial_file
from memstore.model import Memory, Surface
from memstore.uri import StoreURI

__all__ = ["RankedStore", "open_ranked"]


class RankedStore(SqliteStore):
    """`SqliteStore` whose `search` (every reference store's) ranks by relevance and recency
    alone, and is what the harness hands an agent (the ``search`` capability)."""

    capabilities = REFERENCE_CAPABILITIES | {"search"}

    def search(self, repo: str, query: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        """The ``limit`` visible memories of ``repo`` that best match ``query`` (BM25 fused with recency)."""
        return self._search(repo, query, actor=actor, surface=surface, limit=limit, weights=RELEVANCE_AND_RECENCY)


@per_trial(
    trial_file,
    hint="use '{scheme}:' (a private file per trial), or put {{scenario}}, {{trial}} and {{arm}} in the path",
)
def open_ranked(uri: str, options: StoreOptions) -> RankedStore:
    """Factory for ``ranked:`` URIs (paths as for ``sqlite:``; ``ranked://`` alone is in memory)."""
    path, _ = parse_sqlite_uri(uri) if StoreURI.parse(uri).path else (":memory:", {})
    return RankedStore(path, options)
