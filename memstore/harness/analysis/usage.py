"""What agents spent: tokens, cost and sessions that failed for infrastructure reasons, as the
agents reported them (``usage`` in ``result.json``, or `Tools.report_usage` in process).
Summed per arm; the stubs spend nothing. Wall time is in ``timings.json`` (not repeatable)."""

from __future__ import annotations

from memstore.harness.analysis.metric_registry import Direction, Slice, metric
from memstore.harness.analysis.metrics import _binary
from memstore.harness.analysis.pairs import column
from memstore.harness.analysis.run_results import Rate
from memstore.harness.records import SESSION

__all__: list[str] = []


@metric(
    "infra_error_rate",
    label="infra",
    counts="sessions that failed for a reason outside the agent's work (timeout, model endpoint down) / sessions; "
    "they count as not run in every outcome",
    direction=Direction.LOWER,
)
def _infra(s: Slice) -> Rate | None:
    return _binary(s.sessions, SESSION.infra_error)


def _total(s: Slice, name: str) -> int:
    return int(column(s.sessions, name).sum())


@metric(
    SESSION.input_tokens,
    label="in tok",
    counts="input tokens the agent reported, summed",
    direction=Direction.COST,
    rate=False,
    summary=False,
)
def _input(s: Slice) -> int:
    return _total(s, SESSION.input_tokens)


@metric(
    SESSION.output_tokens,
    label="out tok",
    counts="output tokens the agent reported, summed",
    direction=Direction.COST,
    rate=False,
    summary=False,
)
def _output(s: Slice) -> int:
    return _total(s, SESSION.output_tokens)


@metric(SESSION.cache_tokens, label="cache tok", counts="cached input tokens the agent reported, summed",
        direction=Direction.COST, rate=False, summary=False)  # fmt: skip
def _cache(s: Slice) -> int:
    return _total(s, SESSION.cache_tokens)


@metric(
    SESSION.cost_usd,
    label="cost $",
    counts="US dollars the agent reported spending, summed",
    direction=Direction.COST,
    rate=False,
    summary=False,
)
def _cost(s: Slice) -> float:
    return round(float(column(s.sessions, SESSION.cost_usd).sum()), 6)


def _merged(s: Slice) -> int:
    found = s.sessions
    return int(column(found, SESSION.merged).fillna(False).astype(bool).sum()) if SESSION.merged in found else 0


@metric("tokens_per_merge", label="tok/merge", counts="input and output tokens per merged change",
        direction=Direction.COST, rate=False, summary=False)  # fmt: skip
def _tokens_per_merge(s: Slice) -> float | None:
    merged = _merged(s)
    return round((_total(s, SESSION.input_tokens) + _total(s, SESSION.output_tokens)) / merged, 3) if merged else None


@metric(
    "cost_per_merge",
    label="$/merge",
    counts="US dollars per merged change",
    direction=Direction.COST,
    rate=False,
    summary=False,
)
def _cost_per_merge(s: Slice) -> float | None:
    merged = _merged(s)
    return round(float(column(s.sessions, SESSION.cost_usd).sum()) / merged, 6) if merged else None
