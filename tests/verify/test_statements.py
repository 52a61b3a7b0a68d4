"""A memory is valid only when what it states matches what the cited code says: the classes the
verdict benchmark measures, each rebuilt from realistic code (an HTTP client's settings module
and its package metadata across two releases)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from memstore import Citation, Kind, Memory, Surface
from memstore.verify import GitCodebase, Verdict, VerdictStatus, verify_memory
from memstore.verify.history import HistoryBuilder
from tests.verify.conftest import Build

V = VerdictStatus
T0 = datetime(2026, 1, 5, tzinfo=UTC)

OLD_SETTINGS = '''\
"""Settings of the HTTP client."""
import os

__version__ = "2.31.0"
DEFAULT_ENCODING = "utf-8"
MAX_RETRIES = 5
WS_1005_ABNORMAL_CLOSURE = 1005
LEGACY_PROXY = "http://proxy:3128"


class BaseAdapter(object):
    def send(self, request, stream=False, timeout=None, verify=True):
        raise NotImplementedError


class HTTPAdapter(BaseAdapter):
    def send(self, request, stream=False, timeout=None, verify=True, cert=None):
        if timeout is not None and timeout < 0:
            raise ValueError("timeout must be positive")
        return request


def request(method, url, doActions=True, pool_size=10):
    return (method, url, doActions, pool_size)


def merge_setting(request_setting, session_setting, dict_class=dict):
    return request_setting or session_setting
'''

NEW_SETTINGS = '''\
"""Settings of the HTTP client."""
import os
import typing as t

__version__ = "2.32.0"
DEFAULT_ENCODING = "utf-8"
MAX_RETRIES = 5
WS_1005_NO_STATUS_RCVD = 1005
LEGACY_PROXY = "http://proxy:3128"


class BaseAdapter:
    def send(self, request, stream: bool = False, timeout: t.Optional[float] = None, verify: bool = True):
        raise NotImplementedError


class HTTPAdapter(BaseAdapter, t.Generic[t.Any]):
    def send(
        self,
        request,
        stream: bool = False,
        timeout: t.Optional[float] = None,
        verify: bool = True,
        cert: t.Optional[str] = None,
        proxies: t.Optional[dict] = None,
    ):
        if timeout is not None and timeout < 0:
            raise ValueError("timeout must be positive")
        return request


def request(method, url, do_actions=True, pool_size=10):
    return (method, url, do_actions, pool_size)


def merge_setting(request_setting, session_setting, dict_class=dict):
    return request_setting or session_setting


OldAdapter = HTTPAdapter
'''

OLD_PYPROJECT = """\
[project]
name = "client"
dependencies = [
    "charset-normalizer>=2,<4",
    "idna>=2.5,<4",
    "urllib3>=1.21.1,<3",
]
"""

NEW_PYPROJECT = OLD_PYPROJECT.replace('"urllib3>=1.21.1,<3"', '"urllib3>=1.26,<3"')

USES = """\
from client.settings import LEGACY_PROXY


def proxy_for(url):
    return LEGACY_PROXY
"""


# compat.py's one function, folded into a module of text helpers of another name (git pairs no rename)
TEXT = "".join(f"def helper_{n}(value):\n    return value.strip() * {n}\n\n\n" for n in range(12)) + (
    "def ensure_text(value, encoding='utf-8'):\n    return value\n"
)

Check = Callable[[str, str, int], Verdict]


@pytest.fixture
def check(build: Build) -> Check:
    """``check(fact, path, line)``: the fact, citing ``path:line`` at the first release, judged at the second."""
    b = HistoryBuilder()
    b.write("client/settings.py", OLD_SETTINGS).write("pyproject.toml", OLD_PYPROJECT).write("client/proxy.py", USES)
    b.write("client/compat.py", "def ensure_text(value, encoding='utf-8'):\n    return value\n")
    b.commit("2.31.0", label="old")
    b.write("client/settings.py", NEW_SETTINGS).write("pyproject.toml", NEW_PYPROJECT)
    b.remove("client/compat.py").write("client/text.py", TEXT)
    b.commit("2.32.0", label="new")
    built = build(b, bare=True)
    now = GitCodebase(built.path, built.commits["new"])

    def judge(fact: str, path: str, line: int) -> Verdict:
        memory = Memory(
            id="mem_test", repo="acme/client", kind=Kind.FACT, subject="client settings", fact=fact,
            citations=(Citation(path, line, commit=built.commits["old"]),), reason="Seen in a change.",
            author="ana", surface=Surface.CODING_AGENT, created_at=T0, refreshed_at=T0,
        )  # fmt: skip
        return verify_memory(memory, now)

    return judge


def _line(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize(
    ("fact", "needle", "value"),
    [
        ("`MAX_RETRIES` is set to `6` in `client/settings.py`.", "MAX_RETRIES", "`5`"),  # a number one off
        ('`DEFAULT_ENCODING` is set to `"utf_8"`.', "DEFAULT_ENCODING", '`"utf-8"`'),  # a name spelled another way
        ("`merge_setting` takes `(request_setting, session_setting)`.", "def merge_setting", "dict_class)`"),
        ("`request` defaults `pool_size` to `11`.", "def request", "`10`"),
    ],
)
def test_a_value_near_the_codes_behind_a_line_that_did_not_move_is_contradicted(
    check: Check, fact: str, needle: str, value: str
) -> None:
    verdict = check(fact, "client/settings.py", _line(OLD_SETTINGS, needle))
    assert verdict.status is V.CONTRADICTED
    assert verdict.corrected is not None
    assert value in verdict.corrected.fact


def test_a_flag_turned_over_is_contradicted_and_corrected_on_the_line_that_moved(check: Check) -> None:
    verdict = check("`HTTPAdapter.send` defaults `verify` to `False`.", "client/settings.py", 16)
    assert verdict.status is V.CONTRADICTED
    assert verdict.corrected is not None
    assert verdict.corrected.fact == "`HTTPAdapter.send` defaults `verify` to `True`."
    where = _line(NEW_SETTINGS, "verify: bool = True,")
    assert [str(c) for c in verdict.corrected.citations] == [f"client/settings.py:{where}"]


@pytest.mark.parametrize(
    ("fact", "needle"),
    [
        ("`MAX_RETRIES` = `5` is read from the environment at import time.", "MAX_RETRIES"),
        ("`MAX_RETRIES` is `5` only on Windows; elsewhere it is not set.", "MAX_RETRIES"),
        ('`LEGACY_PROXY` (`"http://proxy:3128"`) is deprecated and no longer used.', "LEGACY_PROXY"),
        ("`HTTPAdapter.send` ignores `timeout`: it always uses `None`.", "class HTTPAdapter"),
        ("`request` raises `ValueError` unless `pool_size` is `10`.", "def request"),
    ],
)
def test_a_claim_the_cited_code_does_not_make_is_unsupported_though_its_literals_stand(
    check: Check, fact: str, needle: str
) -> None:
    line = _line(OLD_SETTINGS, needle) + (1 if needle.startswith("class") else 0)
    verdict = check(fact, "client/settings.py", line)
    assert verdict.status is V.UNSUPPORTED, verdict.reason
    assert verdict.reason.startswith("the code refutes the fact")


@pytest.mark.parametrize(
    ("fact", "needle", "corrected"),
    [
        ("`request` defaults `doActions` to `True`.", "def request", "`request` defaults `do_actions` to `True`."),
        (
            "`WS_1005_ABNORMAL_CLOSURE` is set to `1005` in `client/settings.py`.",
            "WS_1005",
            "`WS_1005_NO_STATUS_RCVD` is set to `1005` in `client/settings.py`.",
        ),
    ],
)
def test_a_renamed_identifier_is_contradicted_and_corrected_to_its_new_name(
    check: Check, fact: str, needle: str, corrected: str
) -> None:
    verdict = check(fact, "client/settings.py", _line(OLD_SETTINGS, needle))
    assert verdict.status is V.CONTRADICTED
    assert verdict.corrected is not None
    assert verdict.corrected.fact == corrected


@pytest.mark.parametrize(
    ("fact", "path", "needle", "corrected"),
    [
        ('`__version__` is set to `"2.31.0"`.', "client/settings.py", "__version__", '`"2.32.0"`'),
        (
            "`HTTPAdapter` subclasses `BaseAdapter`.",
            "client/settings.py",
            "class HTTPAdapter",
            "`BaseAdapter, t.Generic[t.Any]`",
        ),
        (
            "`HTTPAdapter.send` takes `(request, stream, timeout, verify, cert)`.",
            "client/settings.py",
            "class HTTPAdapter",
            "`(request, stream, timeout, verify, cert, proxies)`",
        ),
        ("The project requires `urllib3>=1.21.1,<3`.", "pyproject.toml", "urllib3", "`urllib3>=1.26,<3`"),
    ],
)
def test_a_changed_value_is_contradicted_with_the_codes_value_and_never_the_old_one(
    check: Check, fact: str, path: str, needle: str, corrected: str
) -> None:
    text = OLD_PYPROJECT if path == "pyproject.toml" else OLD_SETTINGS
    line = _line(text, needle) + (1 if needle.startswith("class") and "takes" in fact else 0)
    verdict = check(fact, path, line)
    assert verdict.status is V.CONTRADICTED
    assert verdict.corrected is not None
    assert corrected in verdict.corrected.fact
    old = fact.split("`")[-2]
    assert f"`{old}`" not in verdict.corrected.fact


def test_a_true_default_on_a_reformatted_line_is_reanchored_not_contradicted(check: Check) -> None:
    """``stream=False`` became ``stream: bool = False`` in a wrapped signature: still true."""
    verdict = check("`HTTPAdapter.send` defaults `stream` to `False`.", "client/settings.py", 16)
    assert verdict.status is V.REANCHORED
    assert verdict.corrected is not None
    lines = NEW_SETTINGS.splitlines()
    assert verdict.corrected.citations[0].line == lines.index("        stream: bool = False,") + 1


def test_a_citation_of_a_deleted_file_is_missing_though_another_file_holds_its_line(check: Check) -> None:
    """compat.py was removed, and text.py (another name, which git does not pair with it) defines the
    same function word for word: no evidence of a move, so the memory has nothing left to stand on."""
    verdict = check("`ensure_text` defaults `encoding` to `'utf-8'`.", "client/compat.py", 1)
    assert verdict.status is V.MISSING
    assert verdict.checks[0].status.value == "file_missing"


def test_a_fact_about_code_its_file_never_defined_is_unsupported(check: Check) -> None:
    verdict = check("`connect` defaults `port` to `5432`.", "client/settings.py", _line(OLD_SETTINGS, "MAX_RETRIES"))
    assert verdict.status is V.UNSUPPORTED
