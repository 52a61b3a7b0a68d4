"""The LLM judge seam: the reference verifier says when it is unsure, and the example judge asks a
model (here the scripted endpoint, a stand-in) about those cases only."""

from __future__ import annotations

from datetime import UTC, datetime

from openai import OpenAI

from memstore import Citation, Kind, Memory, Surface
from memstore.testing.scripted_model import ScriptedModel, serve
from memstore.verify import GitCodebase, VerdictStatus, verify_memory
from memstore.verify.history import HistoryBuilder
from memstore.verify.llm_judge import LlmJudge
from tests.verify.conftest import Build

T0 = datetime(2026, 1, 5, tzinfo=UTC)


def _memory(fact: str, citation: Citation) -> Memory:
    return Memory(
        id="mem_test", repo="acme/api", kind=Kind.FACT, subject="Retry policy", fact=fact, citations=(citation,),
        reason="r", author="ana", surface=Surface.CODING_AGENT, created_at=T0, refreshed_at=T0,
    )  # fmt: skip


def test_only_uncertain_verdicts_go_to_the_judge(build: Build) -> None:
    b = HistoryBuilder()
    b.write("client.py", "def fetch(url):\n    return retry(get, url, attempts=3, backoff=2)\n")
    b.commit("old", label="old")
    b.write("client.py", "def fetch(url):\n    return retry(get, url, attempts=3, backoff=jitter(2))\n")
    b.commit("new")
    built = build(b)
    codebase = GitCodebase(built.path, "main")
    old = built.commits["old"]
    changed = _memory(
        "`fetch` retries with `retry`: failed GETs are tried again.", Citation("client.py", 2, commit=old)
    )
    steady = _memory("`fetch(url)` takes the URL.", Citation("client.py", 1, commit=old))
    reference = verify_memory(changed, codebase)
    assert reference.status is VerdictStatus.REANCHORED
    assert reference.uncertain == "a cited line changed, and no claim of the fact was seen to go"
    assert verify_memory(steady, codebase).uncertain == ""

    model = ScriptedModel({"conversations": [{"match": "You check whether a memory", "turns": [
        {"content": '{"verdict": "contradicted", "reason": "the backoff is no longer a plain 2"}'}]}]})  # fmt: skip
    with serve(model) as url:
        judge = LlmJudge("scripted", client=OpenAI(base_url=url, api_key="scripted"))
        judged = verify_memory(changed, codebase, verifier=judge)
        kept = verify_memory(steady, codebase, verifier=judge)
    assert judged.status is VerdictStatus.CONTRADICTED
    assert judged.reason == "judged by scripted: the backoff is no longer a plain 2"
    assert judged.corrected is None  # a judge's contradiction carries no value read off the code
    assert kept.status is VerdictStatus.VALID
    assert judge.asked == 1
    assert len(model.log) == 1


def test_a_judge_that_fails_leaves_the_reference_standing(build: Build) -> None:
    b = HistoryBuilder()
    b.write("client.py", "x = retry(get, attempts=3)\n")
    b.commit("old", label="old")
    b.write("client.py", "x = retry(get, attempts=3, backoff=1)\n")
    b.commit("new")
    built = build(b)
    memory = _memory("Failed GETs are tried again with `retry`.", Citation("client.py", 1, commit=built.commits["old"]))
    failing = ScriptedModel({"conversations": [{"match": "You check", "turns": [{"error": 503}]}]})
    with serve(failing) as url:
        judge = LlmJudge("scripted", client=OpenAI(base_url=url, api_key="x", max_retries=0))
        verdict = verify_memory(memory, GitCodebase(built.path, "main"), verifier=judge)
    assert verdict.status is VerdictStatus.REANCHORED
    assert verdict.reason.endswith("(the judge could not answer: InternalServerError)")
