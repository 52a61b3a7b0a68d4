"""A synthetic repository for generated populations: settings kept in three places, a
history that moves, renames and changes them, and the repository's own test.

Each setting is kept in a Python service config, a TypeScript module of the web client and a
Markdown table in the docs; some places name it otherwise (an *alias*). The history is
scripted from the seed: lines move, files are renamed, values change everywhere, unrelated
work happens, and an abandoned branch changes a few values. `tests/check_limits.py` fails
when a setting differs between its places.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

from memstore.harness.scenarios.model import Edit, Location, Step

__all__ = ["Learned", "Repo", "Setting", "history_of", "new_repo", "with_value"]


_WORDS = ["retry", "batch", "quota", "cache", "page", "upload", "session", "export", "report", "queue"]
_ALIASES = ["max_attempts", "burst_size", "daily_cap", "keep_items", "per_page", "chunk_count", "idle_limit"]
_LABELS = ["Attempts allowed", "Burst allowed", "Daily allowance", "Items kept", "Rows shown", "Chunks sent"]


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part.title() for part in rest)


@dataclass
class Setting:
    """One setting and the three places it is kept."""

    name: str  # RETRY_LIMIT_3, as the service config names it
    value: int
    web_name: str  # the same name, or an alias
    doc_label: str  # the same name, or a label in words
    config: str
    web: str

    @property
    def web_aliased(self) -> bool:
        return self.web_name != self.name

    @property
    def doc_aliased(self) -> bool:
        return self.doc_label != self.name


@dataclass
class Repo:
    """The evolving state of one synthetic repository while its history is written."""

    rng: random.Random
    index: int
    settings: list[Setting] = field(default_factory=list)
    files: dict[str, list[str]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"gen/repo{self.index:04d}"

    def line_of(self, path: str, needle: str) -> int:
        return next(i for i, text in enumerate(self.files[path], 1) if needle in text)

    def places(self, k: int) -> list[tuple[str, int]]:
        """(path, line) of the three places setting ``k`` is kept, now."""
        s = self.settings[k]
        return [
            (s.config, self.line_of(s.config, f"{s.name} = ")),
            (s.web, self.line_of(s.web, f" {s.web_name} = ")),
            ("docs/limits.md", self.line_of("docs/limits.md", f"| {s.doc_label} |")),
        ]

    def patterns(self, k: int) -> list[Location]:
        """Where the check reads each place's value."""
        s = self.settings[k]
        return [
            Location(s.config, rf"\b{s.name} = (\d+)"),
            Location(s.web, rf"\b{s.web_name} = (\d+);"),
            Location("docs/limits.md", rf"\| {re.escape(s.doc_label)} \| (\d+) \|"),
        ]

    def set_value(self, k: int, new: int) -> tuple[Edit, ...]:
        """Change setting ``k`` everywhere it is kept; the edits that do it."""
        edits = []
        for path, line in self.places(k):
            old_text = self.files[path][line - 1]
            new_text = with_value(old_text, self.settings[k].value, new)
            edits.append(Edit("replace", {"path": path, "old": old_text, "new": new_text}))
            self.files[path][line - 1] = new_text
        self.settings[k].value = new
        return tuple(edits)

    def text(self) -> dict[str, bytes]:
        return {p: ("\n".join(lines) + "\n").encode() for p, lines in self.files.items()}


def with_value(line: str, old: int, new: int) -> str:
    """``line`` with its value changed: the last occurrence of ``old``, which follows the name
    (``QUEUE_LIMIT_19 = 19`` must not become ``QUEUE_LIMIT_44 = 44``)."""
    head, found, tail = line.rpartition(str(old))
    return f"{head}{new}{tail}" if found else line


def new_repo(rng: random.Random, index: int, p: dict[str, Any]) -> Repo:
    repo = Repo(rng, index)
    aliases = p.get("aliases", 0.3)
    for k in range(p.get("invariants_per_repository", 4)):
        name = f"{_WORDS[k % len(_WORDS)].upper()}_LIMIT_{k}"
        web_name = f"{_camel(_ALIASES[rng.randrange(len(_ALIASES))])}{k}" if rng.random() < aliases else name
        doc_label = f"{_LABELS[rng.randrange(len(_LABELS))]} (service {k})" if rng.random() < aliases else name
        repo.settings.append(
            Setting(
                name, rng.randrange(10, 900), web_name, doc_label, f"services/svc{k}/config.py", f"web/src/limits{k}.ts"
            )
        )
    for k, s in enumerate(repo.settings):
        repo.files[s.config] = [f'"""Settings of service {k}."""', "", f"{s.name} = {s.value}", ""]
        repo.files[s.web] = [
            f"// Limits the web client enforces for service {k}.",
            f"export const {s.web_name} = {s.value};",
        ]
    repo.files["docs/limits.md"] = ["# Limits", "", "| name | value |", "|---|---|"] + [
        f"| {s.doc_label} | {s.value} |" for s in repo.settings
    ]
    for f in range(3):
        repo.files[f"lib/util{f}.py"] = [f"def helper_{f}(x):", "    return x", ""]
    repo.files["tests/check_limits.py"] = _check_script(repo.settings)
    return repo


def _check_script(settings: list[Setting]) -> list[str]:
    """The repository's own test: a standard-library script that fails when a setting differs
    between the service config, the web client and the docs (the merge check runs it)."""
    table = [f"    ({k}, {s.name!r}, {s.web_name!r}, {s.doc_label!r})," for k, s in enumerate(settings)]
    return [
        '"""Every limit must be the same in the service config, the web client and the docs."""',
        "",
        "import pathlib",
        "import re",
        "import sys",
        "",
        "ROOT = pathlib.Path(__file__).resolve().parent.parent",
        "LIMITS = [  # (service, config name, web client name, docs label)",
        *table,
        "]",
        "",
        "",
        "def value(paths, pattern):",
        "    for path in paths:",
        "        if (ROOT / path).is_file():",
        "            found = re.search(pattern, (ROOT / path).read_text(), re.MULTILINE)",
        "            return found.group(1) if found else None",
        "    return None",
        "",
        "",
        "def main():",
        "    failures = []",
        "    for k, name, web_name, label in LIMITS:",
        "        kept = {",
        '            "config": value([f"services/svc{k}/config.py"], rf"^{name} = (\\d+)$"),',
        '            "web": value([f"web/src/limits{k}.ts", f"web/src/limits/{k}.ts"], rf"\\b{web_name} = (\\d+);"),',
        '            "docs": value(["docs/limits.md"], rf"^\\| {re.escape(label)} \\| (\\d+) \\|$"),',
        "        }",
        "        if None in kept.values() or len(set(kept.values())) > 1:",
        '            failures.append(f"{name}: {kept}")',
        '    print("\\n".join(failures) or f"{len(LIMITS)} limits agree")',
        "    return 1 if failures else 0",
        "",
        "",
        'if __name__ == "__main__":',
        "    sys.exit(main())",
        "",
    ]


@dataclass
class Learned:
    """What someone learned about setting ``k`` at a commit: where it was kept and its value."""

    label: str
    places: list[tuple[str, int]]
    value: int


def history_of(repo: Repo, p: dict[str, Any]) -> tuple[list[Step], dict[int, Learned], dict[int, tuple[str, int]]]:
    """The scripted history; what was learned of each setting and when; the abandoned branch's values."""
    rng, count = repo.rng, len(repo.settings)
    learned = {k: Learned("initial", repo.places(k), repo.settings[k].value) for k in range(count)}
    history: list[Step] = []
    for c in range(p.get("history_length", 10)):
        k, roll, label = rng.randrange(count), rng.random(), f"h{c}"
        s = repo.settings[k]
        edits: tuple[Edit, ...]
        if roll < 0.45:  # lines move
            path = rng.choice([s.config, "docs/limits.md"])
            repo.files[path][1:1] = [f"# note {c}"]
            edits = (Edit("insert", {"path": path, "line": 2, "text": f"# note {c}\n"}),)
        elif roll < 0.6 and "/limits/" not in s.web:  # a file is renamed
            new = s.web.replace("/limits", "/limits/")
            edits = (Edit("rename", {"from": s.web, "to": new}),)
            repo.files[new] = repo.files.pop(s.web)
            s.web = new
        elif roll < 0.85:  # the value changes everywhere
            edits = repo.set_value(k, s.value + rng.randrange(1, 50))
        else:  # unrelated work
            f = rng.randrange(3)
            path = f"lib/util{f}.py"
            repo.files[path].append(f"# touched {c}")
            edits = (Edit("insert", {"path": path, "line": len(repo.files[path]), "text": f"# touched {c}\n"}),)
        history.append(Step("commit", {"commit": f"change {c}", "label": label}, edits))
        if rng.random() < 0.3:  # someone learns the setting again, here
            learned[k] = Learned(label, repo.places(k), s.value)
    spike: dict[int, tuple[str, int]] = {}  # an abandoned branch changes a few values and is never merged
    history.append(Step("branch", {"branch": "spike"}))
    for k in range(min(2, count)):
        s = repo.settings[k]
        path, line = s.config, repo.line_of(s.config, f"{s.name} = ")
        text = repo.files[path][line - 1]
        spike[k] = (f"spike{k}", s.value + 1000)
        new_text = with_value(text, s.value, s.value + 1000)
        history.append(
            Step(
                "commit",
                {"commit": f"try new limit {k}", "label": f"spike{k}"},
                (Edit("replace", {"path": path, "old": text, "new": new_text}),),
            )
        )
    history.append(Step("switch", {"switch": "main"}))
    return history, learned, spike
