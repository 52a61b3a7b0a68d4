"""A store URI is one value, parsed once: its scheme, what it wraps, its path, its label, and its
password hidden (redacted) or taken out (identity)."""

from __future__ import annotations

import re
import urllib.parse
from importlib.metadata import entry_points

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstore.errors import ConfigurationError
from memstore.uri import StoreURI

# One example of every scheme the project ships: (URI, scheme, path, label).
SHIPPED = [
    ("agentmem:///base/dir", "agentmem", "/base/dir", "agentmem"),
    ("agentmem://", "agentmem", "", "agentmem"),
    ("mcp:server-memory?folder=/tmp/m", "mcp", "server-memory", "mcp:server-memory?folder=/tmp/m"),
    ("mem0:///data/mem0", "mem0", "/data/mem0", "mem0"),
    ("memcite:", "memcite", "", "memcite"),
    ("memory://", "memory", "", "memory"),
    ("mutant:forgets-some:sqlite:", "mutant", "", "forgets-some(sqlite)"),
    ("naive://", "naive", "", "naive"),
    ("postgres://ana@db/team", "postgres", "ana@db/team", "postgres"),
    ("postgresql://ana@db:5432/team?schema=run_{trial}", "postgresql", "ana@db:5432/team", "postgresql"),
    ("ranked:///abs/r.db", "ranked", "/abs/r.db", "ranked"),
    ("repomemory:///repos", "repomemory", "/repos", "repomemory"),
    ("facto:///facts", "facto", "/facts", "facto"),
    ("bettermemory:///bm", "bettermemory", "/bm", "bettermemory"),
    ("search:sqlite:", "search", "sqlite:", "search:sqlite:"),
    ("traced:sqlite:", "traced", "sqlite:", "traced:sqlite:"),
    ("sqlite:///abs/path.db", "sqlite", "/abs/path.db", "sqlite"),
    ("sqlite:////abs/path.db", "sqlite", "/abs/path.db", "sqlite"),
    ("sqlite:rel.db", "sqlite", "rel.db", "sqlite:rel.db"),
    ("sqlite://:memory:", "sqlite", ":memory:", "sqlite"),
]


@pytest.mark.parametrize(("uri", "scheme", "path", "label"), SHIPPED)
def test_every_shipped_scheme_reads_as_its_backend_reads_it(uri: str, scheme: str, path: str, label: str) -> None:
    parsed = StoreURI.parse(uri)
    assert (parsed.scheme, parsed.path, parsed.label) == (scheme, path, label)
    assert parsed.redacted == parsed.identity == uri  # no password: shown and kept as written


def test_the_examples_cover_every_scheme_the_project_ships() -> None:
    shipped = {entry.name for entry in entry_points(group="memstore.backends") if entry.value.startswith("memstore.")}
    assert shipped <= {scheme for _, scheme, _, _ in SHIPPED}


def test_a_reference_has_no_scheme_but_a_module_and_a_factory() -> None:
    parsed = StoreURI.parse("mypackage.mystore:open_store")
    assert (parsed.scheme, parsed.module, parsed.attribute) == ("", "mypackage.mystore", "open_store")
    assert parsed.label == "mypackage.mystore:open_store"
    assert StoreURI.parse("no_such_module:factory").module == "no_such_module"  # not a scheme: '_' is not in one


def test_a_relative_sqlite_file_is_a_path_not_a_reference() -> None:
    parsed = StoreURI.parse("sqlite:rel.db")
    assert (parsed.scheme, parsed.module, parsed.path) == ("sqlite", "", "rel.db")


def test_the_query_is_kept_as_written() -> None:
    parsed = StoreURI.parse("sqlite:///m.db?busy_timeout=2")
    assert (parsed.path, parsed.query) == ("/m.db", "busy_timeout=2")


def test_a_wrapper_nested_twice_holds_each_store_inside_the_next() -> None:
    parsed = StoreURI.parse("mutant:forgets-some:mutant:identity:sqlite:///tmp/x.db")
    assert (parsed.wrapper, parsed.head, parsed.label) == ("forgets-some", "mutant:forgets-some:",
                                                            "forgets-some(identity(sqlite))")  # fmt: skip
    middle = parsed.inner
    assert middle is not None
    assert (middle.wrapper, middle.head) == ("identity", "mutant:identity:")
    innermost = middle.inner
    assert innermost is not None
    assert (innermost.text, innermost.path) == ("sqlite:///tmp/x.db", "/tmp/x.db")


def test_a_server_holds_the_store_it_serves() -> None:
    parsed = StoreURI.parse("mcp:memstore?store=mutant:forgets-some:ranked:&command=memstore mcp")
    assert parsed.inner is not None
    assert parsed.inner.label == "forgets-some(ranked)"
    assert (parsed.head, parsed.label) == ("", "mcp:memstore(forgets-some(ranked))?command=memstore mcp")


def test_a_served_store_is_read_as_its_server_is_given_it_decoded() -> None:
    parsed = StoreURI.parse("mcp:memstore?store=mutant%3Aidentity%3Asqlite%3A")
    assert parsed.inner is not None
    assert (parsed.inner.text, parsed.label) == ("mutant:identity:sqlite:", "mcp:memstore(identity(sqlite))")


def test_a_wrapper_with_nothing_inside_is_left_for_its_backend_to_refuse() -> None:
    parsed = StoreURI.parse("mutant:forgets-some:")
    assert (parsed.scheme, parsed.inner, parsed.head) == ("mutant", None, "")


@pytest.mark.parametrize(
    ("uri", "redacted", "identity"),
    [
        ("postgresql://u:p@ss@h/db", "postgresql://u:***@h/db", "postgresql://u@h/db"),
        ("postgresql://u:pa:ss@h/db", "postgresql://u:***@h/db", "postgresql://u@h/db"),
        ("postgresql://u:p%40ss@h/db", "postgresql://u:***@h/db", "postgresql://u@h/db"),
        ("postgresql://u:pw@[::1]:5432/db", "postgresql://u:***@[::1]:5432/db", "postgresql://u@[::1]:5432/db"),
        ("postgresql://u@[2001:db8::7]/db?password=pw&schema=s", "postgresql://u@[2001:db8::7]/db?password=***&schema=s",
         "postgresql://u@[2001:db8::7]/db?schema=s"),
        ("mutant:identity:mutant:forgets-some:postgresql://u:pw@h/db",
         "mutant:identity:mutant:forgets-some:postgresql://u:***@h/db",
         "mutant:identity:mutant:forgets-some:postgresql://u@h/db"),
        ("mcp:memstore?store=postgresql://u:pw@h/db", "mcp:memstore?store=postgresql://u:***@h/db",
         "mcp:memstore?store=postgresql://u@h/db"),
    ],
)  # fmt: skip
def test_a_password_is_hidden_where_shown_and_gone_where_kept(uri: str, redacted: str, identity: str) -> None:
    parsed = StoreURI.parse(uri)
    assert (parsed.redacted, parsed.identity) == (redacted, identity)
    assert repr(parsed) == f"StoreURI({redacted!r})"


def test_an_ipv6_host_is_read_whole() -> None:
    parsed = StoreURI.parse("postgresql://ana@[::1]:5432/team")
    assert (parsed.scheme, parsed.label, parsed.identity) == (
        "postgresql",
        "postgresql",
        "postgresql://ana@[::1]:5432/team",
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "a store URI is needed, such as 'sqlite:///path/to/memories.db'"),
        ("host=h password=pw dbname=d", "unknown store URI 'host=h password=*** dbname=d': it has no scheme"),
        ("/tmp/memories.db", "it has no scheme"),
        ("mcp:memstore?store=" * 12 + "sqlite:", "a store URI nests more than 8 stores in one another"),
    ],
)
def test_what_is_no_store_uri_is_a_configuration_error(text: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(message)) as caught:
        StoreURI.parse(text)
    assert "\n" not in str(caught.value)


def test_a_store_uri_must_be_text() -> None:
    with pytest.raises(ConfigurationError, match="a store URI is needed"):
        StoreURI.parse(None)


_PIECES = [*"ab:/?&=@%[].-_ *", "password", "store=", "mutant:x:", "sqlite:", "postgresql://u:", "mcp:memstore?"]
_TEXTS = st.one_of(st.text(max_size=80), st.lists(st.sampled_from(_PIECES), max_size=12).map("".join))


@given(_TEXTS)
def test_parse_is_total_on_text_and_its_redacted_form_reads_the_same(text: str) -> None:
    try:
        parsed = StoreURI.parse(text)
    except ConfigurationError:
        return
    again = StoreURI.parse(parsed.redacted)
    assert (parsed.text, again.scheme, again.label, again.redacted) == (text, parsed.scheme, parsed.label,
                                                                        parsed.redacted)  # fmt: skip


_TEMPLATES = (
    "postgresql://user:{p}@db.example:5432/memstore",
    "postgresql://user:{p}@[::1]/memstore?schema=s",
    "postgresql://db.example/memstore?sslmode=require&password={p}",
    "postgresql://db.example/memstore?pass%77ord={p}&sslmode=require",
    "mutant:forgets-some:postgresql://user:{p}@db.example/memstore",
    "mutant:identity:mutant:forgets-some:postgresql://db.example/m?password={p}",
    "mcp:memstore?store=postgresql://user:{p}@db.example/memstore&command=memstore mcp",
)
_PASSWORDS = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=30)


@given(_PASSWORDS, st.sampled_from(_TEMPLATES))
def test_the_redacted_form_never_holds_the_password(password: str, template: str) -> None:
    quoted = urllib.parse.quote(password, safe="")
    parsed = StoreURI.parse(template.format(p=quoted))
    assert parsed.redacted == template.format(p="***")
    assert "***" not in parsed.identity  # taken out, not masked (the password itself is quoted: no "*")


@given(_PASSWORDS, st.sampled_from(_TEMPLATES))
def test_the_redacted_form_reads_as_the_same_store(password: str, template: str) -> None:
    parsed = StoreURI.parse(template.format(p=urllib.parse.quote(password, safe="")))
    again = StoreURI.parse(parsed.redacted)
    assert (again.scheme, again.label) == (parsed.scheme, parsed.label)


@given(_PASSWORDS, _PASSWORDS, st.sampled_from(_TEMPLATES))
def test_the_identity_does_not_change_with_the_password(one: str, other: str, template: str) -> None:
    first, second = (StoreURI.parse(template.format(p=urllib.parse.quote(p, safe=""))) for p in (one, other))
    assert first.identity == second.identity
    assert first.label == second.label


@given(st.sampled_from(["p@ss", "pa:ss", "p@:s@", "p%40ss", "%3A"]), st.sampled_from(_TEMPLATES[:2]))
def test_a_password_with_at_signs_and_colons_is_hidden_whole(password: str, template: str) -> None:
    parsed = StoreURI.parse(template.format(p=password))
    assert password not in parsed.redacted
    assert parsed.redacted == template.format(p="***")
