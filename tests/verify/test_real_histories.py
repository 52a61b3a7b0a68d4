"""Verdict failure classes seen on real Python release histories, rebuilt from realistic code:
a package moved to src/ and reformatted in one change, code spans that black or annotations
rewrote, identifiers renamed on token boundaries, corrections that must be read off the code,
and memories citing short lines."""

from __future__ import annotations

from datetime import UTC, datetime

from memstore import Citation, Kind, Memory, Surface
from memstore.verify import GitCodebase, VerdictStatus, verify_memory
from memstore.verify.history import HistoryBuilder
from tests.verify.conftest import Build

V = VerdictStatus
T0 = datetime(2026, 1, 5, tzinfo=UTC)


def memory(subject: str, fact: str, *citations: Citation) -> Memory:
    return Memory(
        id="mem_test", repo="pallets/click", kind=Kind.FACT, subject=subject, fact=fact, citations=citations,
        reason="Seen while changing the CLI.", author="ana", surface=Surface.CODING_AGENT, created_at=T0,
        refreshed_at=T0,
    )  # fmt: skip


OLD_INIT = """\
'''Composable command line interface toolkit.'''
from .core import Command as Command
from .core import Group as Group
from .core import Context as Context
from .decorators import command as command
from .decorators import group as group
from .decorators import option as option
from .exceptions import ClickException as ClickException
from .exceptions import UsageError as UsageError
from .termui import echo_via_pager as echo_via_pager
from .termui import prompt as prompt
from .utils import echo as echo
from .utils import get_app_dir as get_app_dir

__version__ = '8.0.4'
"""

OLD_CORE = """\
import enum
import os
import sys
from collections import abc

_DEFAULT_HELP = ['--help']

class Context:
    '''The context a command runs in.'''

    def __init__(self, command, parent=None, info_name=None, obj=None,
                 auto_envvar_prefix=None, default_map=None, terminal_width=None,
                 max_content_width=None, resilient_parsing=False,
                 allow_extra_args=None, allow_interspersed_args=None,
                 ignore_unknown_options=None, help_option_names=None,
                 token_normalize_func=None, color=None, show_default=None):
        self.parent = parent
        self.command = command
        self.info_name = info_name
        if help_option_names is None:
            help_option_names = ['--help']
        self.help_option_names = help_option_names
        self.max_content_width = max_content_width
        self.terminal_width = terminal_width

    def lookup_default(self, name, call=True):
        if self.default_map is not None:
            return self.default_map.get(name)
        return None


def split_opt(opt):
    first = opt[:1]
    if first.isalnum():
        return '', opt
    if opt[1:2] == first:
        return opt[:2], opt[2:]
    return first, opt[1:]


class Option:
    def __init__(self, param_decls=None, show_default=False, prompt=False,
                 confirmation_prompt=False, hide_input=False, max_length=45):
        self.max_length = max_length
        self.prompt = prompt
"""


def _black(text: str) -> str:
    """What black does to this file: double quotes, one argument per line, trailing commas."""
    out = text.replace("'", '"').replace('"""', '"""')
    out = out.replace(
        """    def __init__(self, command, parent=None, info_name=None, obj=None,
                 auto_envvar_prefix=None, default_map=None, terminal_width=None,
                 max_content_width=None, resilient_parsing=False,
                 allow_extra_args=None, allow_interspersed_args=None,
                 ignore_unknown_options=None, help_option_names=None,
                 token_normalize_func=None, color=None, show_default=None):""",
        "    def __init__(\n        self,\n"
        + "".join(
            f"        {a},\n"
            for a in (
                "command", "parent=None", "info_name=None", "obj=None", "auto_envvar_prefix=None",
                "default_map=None", "terminal_width=None", "max_content_width=None", "resilient_parsing=False",
                "allow_extra_args=None", "allow_interspersed_args=None", "ignore_unknown_options=None",
                "help_option_names=None", "token_normalize_func=None", "color=None", "show_default=None",
            )
        )
        + "    ):",
    )  # fmt: skip
    return out.replace("\nclass Context:", "\n\nclass Context:")


def moved_and_reformatted(build: Build) -> tuple[GitCodebase, str]:
    """click 8.0 -> 8.1 in miniature: src/ layout, black, annotations, a renamed helper, a new version."""
    b = HistoryBuilder()
    b.write("click/__init__.py", OLD_INIT).write("click/core.py", OLD_CORE).write("README.md", "# click\n")
    b.commit("8.0.4", label="old")
    b.remove("click/__init__.py").remove("click/core.py")
    b.write("src/click/__init__.py", _black(OLD_INIT).replace("8.0.4", "8.1.3"))
    new_core = _black(OLD_CORE).replace("def split_opt(opt):", "def _split_opt(opt: str) -> t.Tuple[str, str]:")
    new_core = new_core.replace("max_length=45", "max_length: int = 45")
    b.write("src/click/core.py", "import typing as t\n" + new_core)
    b.commit("8.1.3: src layout, black, annotations", label="new")
    built = build(b)
    return GitCodebase(built.path, "main"), built.commits["old"]


def test_a_version_in_a_moved_and_reformatted_file_is_contradicted_not_missing(build: Build) -> None:
    codebase, old = moved_and_reformatted(build)
    line = OLD_INIT.splitlines().index("__version__ = '8.0.4'") + 1
    verdict = verify_memory(
        memory(
            "click version",
            "The package version is `8.0.4` (`__version__`).",
            Citation("click/__init__.py", line, commit=old),
        ),
        codebase,
    )  # fmt: skip
    assert verdict.status is V.CONTRADICTED
    assert verdict.corrected is not None
    assert "8.1.3" in verdict.corrected.fact
    assert verdict.corrected.citations[0].path == "src/click/__init__.py"


def test_a_true_fact_in_a_moved_and_reformatted_file_is_reanchored(build: Build) -> None:
    codebase, old = moved_and_reformatted(build)
    line = OLD_CORE.splitlines().index("    def lookup_default(self, name, call=True):") + 1
    verdict = verify_memory(
        memory(
            "Context defaults",
            "`Context.lookup_default` reads the command's default map.",
            Citation("click/core.py", line, commit=old),
        ),
        codebase,
    )  # fmt: skip
    assert verdict.status is V.REANCHORED
    assert verdict.corrected is not None
    assert verdict.corrected.citations[0].path == "src/click/core.py"


def test_code_spans_rewritten_by_black_or_annotations_still_hold(build: Build) -> None:
    codebase, old = moved_and_reformatted(build)
    lines = OLD_CORE.splitlines()
    help_line = lines.index("            help_option_names = ['--help']") + 1
    length_line = next(i for i, t in enumerate(lines, 1) if "max_length=45" in t)
    helps = verify_memory(
        memory(
            "Context help options",
            "The default is `help_option_names = ['--help']`.",
            Citation("click/core.py", help_line, commit=old),
        ),
        codebase,
    )  # fmt: skip
    assert helps.status is V.REANCHORED, helps.reason
    length = verify_memory(
        memory(
            "Option max length",
            "Options default to `max_length=45`.",
            Citation("click/core.py", length_line, commit=old),
        ),
        codebase,
    )  # fmt: skip
    assert length.status is V.REANCHORED, length.reason


def test_an_identifier_renamed_with_a_prefix_is_contradicted(build: Build) -> None:
    codebase, old = moved_and_reformatted(build)
    line = OLD_CORE.splitlines().index("def split_opt(opt):") + 1
    verdict = verify_memory(
        memory(
            "Option splitting",
            "`split_opt` splits an option into its prefix and name.",
            Citation("click/core.py", line, commit=old),
        ),
        codebase,
    )  # fmt: skip
    assert verdict.status is V.CONTRADICTED, verdict.reason
    assert verdict.corrected is not None
    assert "`_split_opt`" in verdict.corrected.fact


def test_a_correction_is_read_off_the_code_or_not_made(build: Build) -> None:
    b = HistoryBuilder()
    b.write("docs/conf.py", 'project = "Click"\nhtml_baseurl = "https://click.palletsprojects.com/en/8.0.x/"\n')
    b.commit("old", label="old")
    b.write("docs/conf.py", 'project = "Click"\nhtml_baseurl = f"https://{DOMAIN}/en/{release}/"\n')
    b.commit("new")
    built = build(b)
    verdict = verify_memory(
        memory("Docs URL", 'The docs are served at "https://click.palletsprojects.com/en/8.0.x/".',
               Citation("docs/conf.py", 2, commit=built.commits["old"])),
        GitCodebase(built.path, "main"),
    )  # fmt: skip
    assert verdict.status is V.CONTRADICTED
    if verdict.corrected is not None:  # whatever it says, it is in the code verbatim
        for contradiction in verdict.contradictions:
            assert contradiction.found is not None
            assert contradiction.found in 'html_baseurl = f"https://{DOMAIN}/en/{release}/"'


def test_a_memory_citing_a_short_line_is_valid_right_after_it_is_stored(build: Build) -> None:
    b = HistoryBuilder()
    client = (
        "class Session:\n    retries = 3\n\n"
        "    def get(self, url, **kwargs):\n"
        '        """Send a GET request, retried on timeouts."""\n'
        '        return self.request("GET", url, retries=self.retries, **kwargs)\n'
    )
    b.write("src/http/session.py", client)
    b.commit("session", label="old")
    built = build(b)
    verdict = verify_memory(
        memory("HTTP GET requests", "GET requests go through `Session.request` and are retried on timeouts.",
               Citation("src/http/session.py", 4, commit=built.commits["old"])),
        GitCodebase(built.path, "main"),
    )  # fmt: skip
    assert verdict.status is V.VALID, verdict.reason
