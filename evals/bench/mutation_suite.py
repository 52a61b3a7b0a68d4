"""The mutation suite as a benchmark: the kill tables of the store and agent mutants, with runtimes.

Run:  python evals/bench/mutation_suite.py                      (stores: jit-verify and no-memory)
      python evals/bench/mutation_suite.py --agents default     (stores: the three default agents)
      python evals/bench/mutation_suite.py --what agents        (agent mutants, library and a population sample)

Stores: the default library less the generated population (the hand-written and the mined
scenarios) against the reference stores and every store mutant of `memstore.testing.mutants`,
in one run. For each mutant: the contract gate that failed, the scenarios where its breaches
were found, and any other gate that failed. Agents: jit-verify against every agent mutant of
`memstore.testing.agent_mutants` on the library and three repositories of the default
population; for each, the named metric and its paired verdict.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

import yaml

from memstore.harness.evaluate import Evaluation, evaluate
from memstore.harness.records import PROMISES
from memstore.harness.run.output import Arm
from memstore.harness.run.runner.pool import RunConfig, iter_arms
from memstore.harness.scenarios.data import scenarios_dir
from memstore.harness.scenarios.loader import load_library
from memstore.testing.agent_mutants import AGENT_MUTANTS
from memstore.testing.mutants import STORE_MUTANTS, mutant_uri

_CONTRACT = re.compile(r"\((?P<metric>\w+) == 0\)$")


def _library() -> list[Path]:
    root = scenarios_dir()
    hand = [p for p in sorted(root.glob("*.yaml")) if "generator:" not in p.read_text(encoding="utf-8")]
    return [*hand, root / "mined"]


def _run(paths: list[Path], arms: list[Arm], workers: int) -> tuple[Evaluation, float]:
    config = RunConfig(scenarios=tuple(load_library(paths)), arms=tuple(arms), workers=workers)
    started = time.perf_counter()
    found = evaluate(config, Path(tempfile.mkdtemp(prefix="memstore-mutants-")))
    return found, time.perf_counter() - started


def stores(agents: list[str], workers: int) -> None:
    uris = ["sqlite:", *(mutant_uri(name, "sqlite:") for name in STORE_MUTANTS)]
    run, seconds = _run(_library(), list(iter_arms(agents, uris)), workers)
    print(f"store mutants: {len(run.config.scenarios)} scenarios, agents {', '.join(agents)}, {len(uris)} stores, "
          f"{len(run.config.arms)} arms, {seconds:.1f} s on {workers} worker(s)\n")  # fmt: skip
    print("| mutant | breaks | gate that failed | caught in | other gates failed |")
    print("|---|---|---|---|---|")
    says = {p.metric: p.says for p in PROMISES}
    for uri in uris:
        label = Arm("x", uri).store_label
        mine = [g for g in run.failed if g.name.split(": ")[0].endswith(f"/{label}")]
        contract = sorted({m["metric"] for g in mine if (m := _CONTRACT.search(g.name))})
        others = sorted({g.name.split(": ", 1)[1] for g in mine if not _CONTRACT.search(g.name)})
        where = sorted(
            {
                scenario
                for name, arm in run.results.arms.items()
                if name.endswith(f"/{label}")
                for scenario, values in arm.per_scenario.items()
                if any(values.get(m) for m in contract)
            }
        )
        name = uri.split(":")[1] if uri.startswith("mutant:") else "reference (sqlite:)"
        breaks = STORE_MUTANTS[name].breaks if name in STORE_MUTANTS else "nothing"
        gate = "; ".join(f"{says[m]} (`{m}`)" for m in contract) or "none"
        shown = ", ".join(f"`{s}`" for s in where[:4]) + (f" and {len(where) - 4} more" if len(where) > 4 else "")
        print(f"| `{name}` | {breaks} | {gate} | {shown or '-'} | {'; '.join(others) or 'none'} |")


def _sample(name: str, repositories: int, flood_share: float) -> Path:
    spec = yaml.safe_load((scenarios_dir() / "generated-population.yaml").read_text(encoding="utf-8"))
    spec["name"] = name
    spec["generator"] |= {"repositories": repositories, "flood_share": flood_share}
    path = Path(tempfile.mkdtemp()) / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return path


def _pair(run: Evaluation, one: str, other: str, metric: str) -> str:
    (c,) = [c for c in run.results.comparisons if {c.a, c.b} == {one, other} and c.metric == metric]
    first, second = (c.a_value, c.b_value) if c.a == one else (c.b_value, c.a_value)
    return f"{first:.3f} | {second:.3f} | {c.verdict.value} for {c.a}, p = {c.p_adjusted:.2g} ({c.method}, n = {c.n})"


def agents(workers: int) -> None:
    """As tests/testing/test_agent_mutants.py runs them: the library, three repositories of the
    default population unflooded and two flooded; every mutant and jit-verify on sqlite:, and
    jit-verify on ranked:."""
    samples = [_sample("population-sample", 3, 0.0), _sample("flooded-sample", 2, 1.0)]
    names = ["jit-verify", *(f"mutant:{n}" for n in AGENT_MUTANTS)]
    arms = [*iter_arms(names, ["sqlite:"]), Arm("jit-verify", "ranked:")]
    run, seconds = _run([*_library(), *samples], arms, workers)
    tasks = run.results.run.tasks
    print(f"agent mutants: the library, 3 generated repositories and 2 flooded ones ({tasks} tasks), {seconds:.1f} s\n")
    print("| mutant | breaks | told apart by | jit-verify | mutant | paired verdict (Holm) |")
    print("|---|---|---|---|---|---|")
    for name, mutant in AGENT_MUTANTS.items():
        shown = _pair(run, "jit-verify/sqlite", f"mutant:{name}/sqlite", mutant.told_by)
        print(f"| `mutant:{name}` | {mutant.breaks} | `{mutant.told_by}` | {shown} |")
    print("\n| outcome decided by | arm | other arm | task success | other | paired verdict (Holm) |")
    print("|---|---|---|---|---|---|")
    for what, one, other in (
        ("retrieval", "jit-verify/ranked", "jit-verify/sqlite"),
        ("the verifier", "jit-verify/sqlite", "mutant:weak-verifier/sqlite"),
    ):
        print(f"| {what} | `{one}` | `{other}` | {_pair(run, one, other, 'task_success_rate')} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--what", choices=["stores", "agents"], default="stores")
    parser.add_argument("--agents", default="jit-verify,no-memory", help="'default' for the three built-in agents")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    if args.what == "agents":
        agents(args.workers)
    else:
        chosen = ["no-memory", "trusting", "jit-verify"] if args.agents == "default" else args.agents.split(",")
        stores(chosen, args.workers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
