"""A synthetic repository for generated populations: settings kept in up to three places, a
history that moves, renames and changes them, and the repository's own test.

Each setting is kept in a Python service config and, each with the share ``copies``, in a
TypeScript module of the web client and in a Markdown table of the docs. Some copies name it
otherwise (an *alias*, share ``aliases``); the repository's own test, `tests/check_limits.py`,
lists an alias next to the setting's name with the share ``discoverable`` (a *linked* copy:
a reader of the test finds it). An alias it does not list sits with no hint of its setting (no
service number in its name, file or comment) in `web/src/constants.ts` or the docs table, among
unrelated constants that happen to hold the same value (*decoys*, share ``decoys`` of the
settings, each kind): nothing in the working copy tells it from them, so only a memory (or a
guess that as often breaks a decoy) finds it. The history is scripted from the seed: lines
move, files are renamed, values change everywhere, unrelated work happens, and an abandoned
branch changes a few values. `tests/check_limits.py` fails when a setting differs between the
places it lists.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

from memstore.harness.scenarios.scenario import Edit, Location, Step

__all__ = ["CONSTANTS", "DOCS", "Learned", "Repo", "Setting", "add_decoys", "history_of", "new_repo", "with_value"]


_WORDS = ["retry", "batch", "quota", "cache", "page", "upload", "session", "export", "report", "queue"]
_ALIASES = ["max_attempts", "burst_size", "daily_cap", "keep_items", "per_page", "chunk_count", "idle_limit"]
_LABELS = ["Attempts allowed", "Burst allowed", "Daily allowance", "Items kept", "Rows shown", "Chunks sent"]
# Names with no word of any setting: unlinked aliases and decoys are drawn from the same pool.
_NEUTRAL = [
    a + b for a in ("peak", "base", "soft", "hard", "outer", "inner") for b in ("Units", "Slots", "Steps", "Marks")
]
_NEUTRAL_LABELS = [
    f"{a} {b}" for a in ("Units", "Slots", "Steps", "Marks") for b in ("held", "in flight", "per window")
]
CONSTANTS = "web/src/constants.ts"  # where unlinked web aliases and web decoys are kept
DOCS = "docs/limits.md"


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part.title() for part in rest)


@dataclass
class Setting:
    """One setting and the places it is kept: always its service config; a web-client copy and
    a docs row when ``web_name`` and ``doc_label`` are set."""

    name: str  # RETRY_LIMIT_3, as the service config names it
    value: int
    web_name: str | None  # the same name, or an alias; None: no web copy
    doc_label: str | None  # the same name, or a label in words; None: no docs row
    config: str
    web: str
    web_linked: bool = True  # the repository's test names the web copy (or it bears the setting's name)
    doc_linked: bool = True

    @property
    def discoverable(self) -> bool:
        """Whether every copy can be found from the working copy: named like the setting, or linked."""
        return self.web_linked and self.doc_linked


@dataclass
class Repo:
    """The evolving state of one synthetic repository while its history is written."""

    rng: random.Random
    index: int
    settings: list[Setting] = field(default_factory=list)
    files: dict[str, list[str]] = field(default_factory=dict)
    neutral: tuple[list[str], list[str]] = field(default_factory=lambda: ([], []))  # names not drawn yet

    @property
    def name(self) -> str:
        return f"gen/repo{self.index:04d}"

    def line_of(self, path: str, needle: str) -> int:
        return next(i for i, text in enumerate(self.files[path], 1) if needle in text)

    decoys: dict[int, list[tuple[str, str]]] = field(default_factory=dict)  # setting: (path, line) holding its value

    def places(self, k: int) -> list[tuple[str, int]]:
        """(path, line) of the places setting ``k`` is kept, now: its config first."""
        s = self.settings[k]
        found = [(s.config, self.line_of(s.config, f"{s.name} = "))]
        if s.web_name is not None:
            found.append((s.web, self.line_of(s.web, f" {s.web_name} = ")))
        if s.doc_label is not None:
            found.append((DOCS, self.line_of(DOCS, f"| {s.doc_label} |")))
        return found

    def patterns(self, k: int) -> list[Location]:
        """Where a check reads each place's value."""
        s = self.settings[k]
        found = [Location(s.config, rf"\b{s.name} = (\d+)")]
        if s.web_name is not None:
            found.append(Location(s.web, rf"\b{s.web_name} = (\d+);"))
        if s.doc_label is not None:
            found.append(Location(DOCS, rf"\| {re.escape(s.doc_label)} \| (\d+) \|"))
        return found

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
    copies, aliases, linked = p.get("copies", 1.0), p.get("aliases", 0.3), p.get("discoverable", 1.0)
    # Where each setting is kept and how each copy is named, from a stream of its own: changing
    # these shares leaves the rest of the repository (values, history, tasks) as it was.
    draw = random.Random(f"{p.get('seed', 0)}:{index}:places")
    neutral, neutral_labels = draw.sample(_NEUTRAL, len(_NEUTRAL)), draw.sample(_NEUTRAL_LABELS, len(_NEUTRAL_LABELS))
    for k in range(p.get("invariants_per_repository", 4)):
        name = f"{_WORDS[k % len(_WORDS)].upper()}_LIMIT_{k}"
        s = Setting(name, rng.randrange(10, 900), None, None, f"services/svc{k}/config.py", f"web/src/limits{k}.ts")
        web = _copy(draw, copies, aliases, linked)
        if web == "named":
            s.web_name = name
        elif web == "linked":
            s.web_name = f"{_camel(_ALIASES[draw.randrange(len(_ALIASES))])}{k}"
        elif web == "hidden":
            s.web_name, s.web, s.web_linked = neutral.pop(), CONSTANTS, False
        doc = _copy(draw, copies, aliases, linked)
        if doc == "named":
            s.doc_label = name
        elif doc == "linked":
            s.doc_label = f"{_LABELS[draw.randrange(len(_LABELS))]} (service {k})"
        elif doc == "hidden":
            s.doc_label, s.doc_linked = neutral_labels.pop(), False
        repo.settings.append(s)
    for k, s in enumerate(repo.settings):
        repo.files[s.config] = [f'"""Settings of service {k}."""', "", f"{s.name} = {s.value}", ""]
        if s.web_name is not None and s.web != CONSTANTS:
            repo.files[s.web] = [
                f"// Limits the web client enforces for service {k}.",
                f"export const {s.web_name} = {s.value};",
            ]
    # An unlinked copy stands anywhere among the others: its place in the file says nothing.
    constants: list[str] = []
    rows = [f"| {s.doc_label} | {s.value} |" for s in repo.settings if s.doc_label is not None and s.doc_linked]
    for s in repo.settings:
        if s.web == CONSTANTS:
            constants.insert(draw.randrange(len(constants) + 1), f"export const {s.web_name} = {s.value};")
        if s.doc_label is not None and not s.doc_linked:
            rows.insert(draw.randrange(len(rows) + 1), f"| {s.doc_label} | {s.value} |")
    repo.files[CONSTANTS] = ["// Constants of the web client.", *constants]
    repo.files[DOCS] = ["# Limits", "", "| name | value |", "|---|---|", *rows]
    for f in range(3):
        repo.files[f"lib/util{f}.py"] = [f"def helper_{f}(x):", "    return x", ""]
    repo.files["tests/check_limits.py"] = _check_script(repo.settings)
    repo.neutral = (neutral, neutral_labels)
    return repo


def _copy(draw: random.Random, copies: float, aliases: float, linked: float) -> str | None:
    """How one copy of a setting is kept: None (no such copy), ``named`` like the setting, ``linked``
    (an alias the repository's test names) or ``hidden`` (an alias nothing names)."""
    if draw.random() >= copies:
        return None
    if draw.random() >= aliases:
        return "named"
    return "linked" if draw.random() < linked else "hidden"


def add_decoys(repo: Repo, p: dict[str, Any]) -> Step | None:
    """Unrelated constants that hold a setting's value as it is now (share ``decoys`` of the
    settings, for each of the web client and the docs), named like unlinked aliases and kept
    beside them: the commit that adds them, or None."""
    draw = random.Random(f"{p.get('seed', 0)}:{repo.index}:decoys")
    neutral, neutral_labels = repo.neutral
    edits = []
    for k, s in enumerate(repo.settings):
        for path, pool, line in (
            (CONSTANTS, neutral, "export const {} = {};"),
            (DOCS, neutral_labels, "| {} | {} |"),
        ):
            if draw.random() >= p.get("decoys", 0.0) or not pool:
                continue
            text = line.format(pool.pop(), s.value)
            first = 1 if path == CONSTANTS else repo.files[path].index("|---|---|") + 1
            at = draw.randrange(first, len(repo.files[path]) + 1)  # anywhere among the entries
            repo.files[path].insert(at, text)
            repo.decoys.setdefault(k, []).append((path, text))
            edits.append(Edit("insert", {"path": path, "line": at + 1, "text": text + "\n"}))
    return Step("commit", {"commit": "Add display constants", "label": "decoys"}, tuple(edits)) if edits else None


def _check_script(settings: list[Setting]) -> list[str]:
    """The repository's own test: a standard-library script that fails when a setting differs
    between the service config, the web client and the docs (the merge check runs it)."""
    table = [
        f"    ({k}, {s.name!r}, {s.web_name if s.web_linked else None!r}, {s.doc_label if s.doc_linked else None!r}),"
        for k, s in enumerate(settings)
    ]
    return [
        '"""Every limit must be the same in the service config, the web client and the docs."""',
        "",
        "import pathlib",
        "import re",
        "import sys",
        "",
        "ROOT = pathlib.Path(__file__).resolve().parent.parent",
        "LIMITS = [  # (service, config name, web client name, docs label): None where it is not checked here",
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
        '        kept = {"config": value([f"services/svc{k}/config.py"], rf"^{name} = (\\d+)$")}',
        "        if web_name:",
        '            web = [f"web/src/limits{k}.ts", f"web/src/limits/{k}.ts"]',
        '            kept["web"] = value(web, rf"\\b{web_name} = (\\d+);")',
        "        if label:",
        '            kept["docs"] = value(["docs/limits.md"], rf"^\\| {re.escape(label)} \\| (\\d+) \\|$")',
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
            path = rng.choice([s.config, DOCS])
            repo.files[path][1:1] = [f"# note {c}"]
            edits = (Edit("insert", {"path": path, "line": 2, "text": f"# note {c}\n"}),)
        elif roll < 0.6 and s.web in repo.files and s.web != CONSTANTS and "/limits/" not in s.web:  # a file is renamed
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
    decoys = add_decoys(repo, p)
    if decoys is not None:
        history.append(decoys)
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
