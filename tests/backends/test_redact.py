"""No password is ever shown or written: every form libpq accepts is masked, and a run against a
PostgreSQL store with a password in its URI leaves it in no file and no output."""

from __future__ import annotations

import urllib.parse
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from memstore.backends import redact, without_password
from memstore.backends.postgresql import parse_postgresql_uri
from memstore.cli import main
from tests.backends.postgres import URL, needs_postgres

ROOT = Path(__file__).parents[2]
SECRET = "Pw-7f3a@x:y/z"


@pytest.mark.parametrize(
    ("uri", "shown", "kept"),
    [
        ("postgresql://u:pw@h/db", "postgresql://u:***@h/db", "postgresql://u@h/db"),
        ("postgresql://u:p@ss@h:5432/db", "postgresql://u:***@h:5432/db", "postgresql://u@h:5432/db"),
        ("postgresql://h/db?password=pw&sslmode=off", "postgresql://h/db?password=***&sslmode=off",
         "postgresql://h/db?sslmode=off"),
        ("postgresql://h/db?sslmode=off&pass%77ord=pw", "postgresql://h/db?sslmode=off&pass%77ord=***",
         "postgresql://h/db?sslmode=off"),
        ("mutant:forgets-some:postgresql://u:pw@h/db", "mutant:forgets-some:postgresql://u:***@h/db",
         "mutant:forgets-some:postgresql://u@h/db"),
        ("host=h password=pw dbname=d", "host=h password=*** dbname=d", "host=h dbname=d"),
        ("host=h password='p w' dbname=d", "host=h password=*** dbname=d", "host=h dbname=d"),
        ("postgresql://u@h/db", "postgresql://u@h/db", "postgresql://u@h/db"),
        ("sqlite:///tmp/a.db", "sqlite:///tmp/a.db", "sqlite:///tmp/a.db"),
    ],
)  # fmt: skip
def test_every_form_of_password_is_masked(uri: str, shown: str, kept: str) -> None:
    assert redact(uri) == shown
    assert without_password(uri) == kept


_TEMPLATES = (
    "postgresql://user:{p}@db.example:5432/memstore",
    "postgresql://db.example/memstore?sslmode=require&password={p}",
    "postgresql://db.example/memstore?pass%77ord={p}&sslmode=require",
    "mutant:forgets-some:postgresql://user:{p}@db.example/memstore",
    "host=db.example password={p} dbname=memstore",
)


@given(st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=30), st.sampled_from(_TEMPLATES))
def test_no_password_survives_redaction_in_any_form(password: str, template: str) -> None:
    uri = template.format(p=urllib.parse.quote(password, safe=""))
    assert redact(uri) == template.format(p="***")  # the password's slot masked, the rest as it was
    assert without_password(uri) == without_password(template.format(p="***"))


def test_a_socket_folder_uri_is_rebuilt_as_libpq_reads_it() -> None:
    conninfo, schema, shown = parse_postgresql_uri("postgresql:///memstore?host=/run/postgresql&schema=mine")
    assert (conninfo, schema, shown) == ("postgresql:///memstore?host=/run/postgresql", "mine",
                                         "postgresql:///memstore?host=/run/postgresql&schema=mine")  # fmt: skip
    import psycopg

    assert psycopg.conninfo.conninfo_to_dict(conninfo) == {"host": "/run/postgresql", "dbname": "memstore"}


@pytest.fixture
def role_with_a_password() -> tuple[str, str]:
    """A login role whose password is distinctive (so it can be looked for), on the test server."""
    import psycopg

    name = f"memstore_pw_{uuid.uuid4().hex[:8]}"
    parts = urllib.parse.urlsplit(URL)
    database = parts.path.strip("/")
    with psycopg.connect(URL, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {name} LOGIN PASSWORD '{SECRET}'")
        admin.execute(f'GRANT CREATE ON DATABASE "{database}" TO {name}')
    host = f"{parts.hostname}:{parts.port or 5432}"
    return f"postgresql://{name}@{host}/{database}", name


@needs_postgres
@pytest.mark.parametrize("form", ["userinfo", "query"])
def test_a_run_with_a_password_writes_and_prints_it_nowhere(
    tmp_path: Path, role_with_a_password: tuple[str, str], form: str
) -> None:
    base, name = role_with_a_password
    quoted = urllib.parse.quote(SECRET, safe="")
    schema = f"s{uuid.uuid4().hex[:6]}_{{scenario}}_{{trial}}_{{arm}}"
    if form == "userinfo":
        uri = base.replace(f"{name}@", f"{name}:{quoted}@") + f"?schema={schema}"
    else:
        uri = f"{base}?password={quoted}&schema={schema}"
    out = tmp_path / "run"
    scenario = str(ROOT / "scenarios" / "api-version-control.yaml")
    result = CliRunner().invoke(main, ["eval", scenario, "--store", uri, "--out", str(out), "--no-fail"])
    assert result.exit_code == 0, result.output
    assert SECRET not in result.output
    assert quoted not in result.output
    written = [p for p in out.rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {"manifest.json", "results.json", "report.html", "report.md"}
    for path in written:
        data = path.read_bytes()
        if path.suffix == ".gz":
            import gzip

            data = gzip.decompress(data)
        assert SECRET.encode() not in data, path
        assert quoted.encode() not in data, path
