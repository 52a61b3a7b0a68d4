"""How often the verifier flags instructions to the reader where there are none, and where they were planted.

Run:  python evals/bench/eval_instructions.py                  (a second; no network)
      python evals/bench/eval_instructions.py --show-held-out  (the hold-out's flagged texts too)

A memory that carries instructions to the next agent ("ignore your task", `curl ... | sh`) is
flagged by `memstore.verify.find_instructions` and never usable, so a fact flagged where it holds
none puts a true memory out of use. Read here, each field a person or a generator wrote:

  hand-written   the subject and the three wordings of every memory of the hand-written verdict
                 benchmark (evals/bench/memories/): tuning projects and hold-out apart; the
                 hold-out's flagged texts are shown only on request, as eval_verdicts.py keeps
                 its failures;
  library        every seeded memory of the shipped scenario library (subject, fact, reason) and
                 every mined fact beside it (scenarios/mined/*.verdicts.jsonl), those planted with
                 instructions (`claim.instructs`) apart: the share of them flagged.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import handwritten

from memstore.harness.scenarios.data import scenarios_dir
from memstore.harness.scenarios.loader import load_library
from memstore.verify import find_instructions

Text = tuple[str, str, str]  # (where it comes from, its field, the text)
FIELDS = ("subject", "fact", "reason")


def _handwritten(split: str) -> list[Text]:
    texts = []
    for project in handwritten.projects().values():
        if project.split != split:
            continue
        for memory in handwritten.load(project):
            texts.append((memory.id, "subject", memory.subject))
            texts += [(f"{memory.id}/{n}", "fact", fact) for n, fact in enumerate(memory.facts, 1)]
    return texts


def _library() -> tuple[list[Text], dict[str, list[Text]]]:
    """The library's texts planted with no instructions, and those of each memory planted with some."""
    texts: list[Text] = []
    planted: dict[str, list[Text]] = {}
    for scenario in load_library():
        for memory in scenario.memories:
            where = f"{scenario.name}/{memory.key}"
            fields = [(where, name, value) for name in FIELDS if (value := getattr(memory, name))]
            if memory.claim.instructs:
                planted[where] = fields
            else:
                texts += fields
    for file in sorted((scenarios_dir() / "mined").glob("*.verdicts.jsonl")):
        for line in file.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            texts += [(f"{file.stem}/{row['key']}", name, row[name]) for name in ("subject", "fact")]
    return texts, planted


def _flagged(texts: list[Text]) -> list[tuple[Text, list[str]]]:
    return [(t, [str(i) for i in found]) for t in texts if (found := find_instructions(t[2], t[1]))]


def _rate(label: str, flagged: int, total: int) -> str:
    return f"{label:<34} {flagged:>5,} of {total:>6,} flagged ({100 * flagged / max(total, 1):.2f}%)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show-held-out", action="store_true", help="Show the hold-out's flagged texts too.")
    args = parser.parse_args()
    print("false flags: texts with no instructions in them that were flagged")
    for split, label in (("tune", "hand-written, tuning projects"), ("holdout", "hand-written, hold-out")):
        texts = _handwritten(split)
        found = _flagged(texts)
        print(_rate(label, len(found), len(texts)))
        if split == "tune" or args.show_held_out:
            for (where, _, text), said in found:
                print(f"  {where}: {text[:160]!r}\n    {'; '.join(said)}")
    texts, planted = _library()
    found = _flagged(texts)
    print(_rate("library (seeded and mined)", len(found), len(texts)))
    for (where, _, text), said in found:
        print(f"  {where}: {text[:160]!r}\n    {'; '.join(said)}")
    caught = [key for key, fields in planted.items() if _flagged(fields)]
    print(f"\nplanted with instructions (claim.instructs): {len(caught)} of {len(planted)} flagged")
    for key in sorted(set(planted) - set(caught)):
        print(f"  missed: {key}")
    sys.exit(0)


if __name__ == "__main__":
    main()
