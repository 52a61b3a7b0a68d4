"""Where the PostgreSQL tests find a server: $MEMSTORE_TEST_POSTGRES_URL (`.ci/run` starts one and
sets it). Without it they are skipped here, and `.ci/run` sets MEMSTORE_REQUIRE_POSTGRES so a
missing server fails CI instead."""

from __future__ import annotations

import os
import uuid

import pytest

URL = os.environ.get("MEMSTORE_TEST_POSTGRES_URL", "")
if not URL and os.environ.get("MEMSTORE_REQUIRE_POSTGRES"):
    raise RuntimeError("MEMSTORE_REQUIRE_POSTGRES is set but MEMSTORE_TEST_POSTGRES_URL is not")
needs_postgres = pytest.mark.skipif(not URL, reason="no PostgreSQL server: set MEMSTORE_TEST_POSTGRES_URL")


def fresh_uri(prefix: str = "t") -> str:
    """The URI of a new, empty store: a schema of its own in the test database."""
    joiner = "&" if "?" in URL else "?"
    return f"{URL}{joiner}schema={prefix}_{uuid.uuid4().hex[:16]}"
