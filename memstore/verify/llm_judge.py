"""An example `Verifier` that asks a language model about the cases the reference is unsure of.

The reference verifier decides every memory from the code alone and says, in
``Verdict.uncertain``, when a heuristic decided it (a changed line read as harmless,
relevance judged by shared words, a contradiction with no value to read). `LlmJudge` keeps the
reference's verdict when it is certain and asks an OpenAI-compatible chat-completions endpoint
(the ``openai`` package: ``pip install 'agent-memstore[llm]'``) otherwise, showing the memory, the
text each citation had and what stands there now. The model answers with one JSON object,
``{"verdict": "valid|reanchored|contradicted|unsupported|missing", "reason": "..."}``; the
reference's correction is kept when the verdicts agree on what to do with the memory.

Measure it against the reference on the same cases::

    python evals/bench/eval_verdicts.py --verifier memstore.verify.llm_judge:from_environment

(``MEMSTORE_JUDGE_MODEL``, ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` name the model and the
endpoint.) An endpoint that fails or answers nonsense leaves the reference's verdict standing,
marked as such in the reason.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from memstore.model import Memory
from memstore.verify.citations import CitationCheck
from memstore.verify.codebase import Codebase
from memstore.verify.verdicts import ReferenceVerifier, Verdict, VerdictStatus, Verifier

__all__ = ["PROMPT", "LlmJudge", "from_environment"]

PROMPT = """You check whether a memory an agent stored about a code base still holds.
Memory subject: {subject}
Memory fact: {fact}
{citations}
Answer with one JSON object and nothing else: {{"verdict": V, "reason": R}} where V is
"valid" (true, cited lines unchanged), "reanchored" (true, but the cited code moved or was reworded),
"contradicted" (the code now says otherwise), "unsupported" (the cited code is not about this),
or "missing" (the cited code is gone)."""


class LlmJudge:
    """The reference verifier, with a language model for the cases it is unsure of.

    Args:
        model: the model name the endpoint serves.
        client: an ``openai.OpenAI`` client (one is made from the environment when None).
        fallback: the verifier whose verdicts are kept when it is sure (the reference).
    """

    def __init__(self, model: str, client: Any = None, fallback: Verifier | None = None) -> None:
        if client is None:
            from openai import OpenAI

            client = OpenAI(max_retries=1, timeout=60)
        self.model, self.client = model, client
        self.fallback = fallback or ReferenceVerifier()
        self.asked = 0

    def judge(self, memory: Memory, checks: Sequence[CitationCheck], codebase: Codebase) -> Verdict:
        verdict = self.fallback.judge(memory, checks, codebase)
        if not verdict.uncertain:
            return verdict
        self.asked += 1
        cited = "\n".join(
            f"Citation {c.citation.path}:{c.citation.line}: it said {c.snippet!r}; now "
            + (f"{c.where} says {c.text!r}" if c.text is not None else f"{c.status.value}")
            for c in verdict.checks
        )
        try:
            reply = self.client.chat.completions.create(
                model=self.model,
                messages=[
                    {
                        "role": "user",
                        "content": PROMPT.format(subject=memory.subject, fact=memory.fact, citations=cited),
                    }
                ],
                temperature=0,
            )
            answer = json.loads(reply.choices[0].message.content or "")
            status = VerdictStatus(str(answer["verdict"]).lower())
        except Exception as exc:  # the endpoint, or its answer, failed: the reference stands
            return replace(verdict, reason=f"{verdict.reason} (the judge could not answer: {type(exc).__name__})")
        reason = f"judged by {self.model}: {str(answer.get('reason', ''))[:300]}"
        if status is verdict.status:
            return replace(verdict, reason=reason, uncertain="")
        corrected = verdict.corrected if status is VerdictStatus.REANCHORED and verdict.corrected else None
        contradictions = verdict.contradictions if status is VerdictStatus.CONTRADICTED else ()
        return Verdict(status, verdict.checks, corrected, reason, contradictions)


def from_environment() -> LlmJudge:
    """The judge for ``--verifier memstore.verify.llm_judge:from_environment``."""
    return LlmJudge(os.environ.get("MEMSTORE_JUDGE_MODEL", "gpt-4.1-mini"))
