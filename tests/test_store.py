"""`open_store` and the backend registry."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from memstore import AccessPolicy, ConfigurationError, MemoryStore, open_store
from memstore.backends import StoreOptions, known_schemes, register_backend
from memstore.backends.memory import InMemoryStore, open_memory
from memstore.backends.sqlite import SqliteStore


def test_builtin_schemes(tmp_path: Path) -> None:
    assert isinstance(open_store("memory://", access=AccessPolicy()), InMemoryStore)
    store = open_store(f"sqlite:///{tmp_path / 'm.db'}", access=AccessPolicy())
    assert isinstance(store, SqliteStore)
    assert store.path == str(tmp_path / "m.db")


def test_stores_satisfy_the_protocol() -> None:
    assert isinstance(open_store("memory://", access=AccessPolicy()), MemoryStore)
    assert isinstance(open_store("sqlite://:memory:", access=AccessPolicy()), MemoryStore)


def test_unknown_scheme_names_the_known_ones() -> None:
    with pytest.raises(ConfigurationError) as caught:
        open_store("mongodb://db/memories", access=AccessPolicy())
    message = str(caught.value)
    assert "'mongodb://db/memories'" in message
    assert "memory://" in message
    assert "sqlite://" in message
    assert "package.module:function" in message


def test_module_factory_uri() -> None:
    store = open_store("memstore.backends.memory:open_memory", access=AccessPolicy())
    assert isinstance(store, InMemoryStore)


def test_module_factory_uri_that_does_not_import() -> None:
    with pytest.raises(ConfigurationError, match="cannot import store module 'no_such_module'"):
        open_store("no_such_module:factory", access=AccessPolicy())


def test_registered_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    from memstore import backends

    monkeypatch.setattr(
        backends.BACKENDS, "registered", dict(backends.BACKENDS.registered)
    )  # registered for this test only
    seen: list[str] = []

    @register_backend("probe")
    def probe(uri: str, options: StoreOptions) -> MemoryStore:
        seen.append(uri)
        return open_memory("memory://", options)

    open_store("probe://anything", access=AccessPolicy())
    assert seen == ["probe://anything"]
    assert "probe" in known_schemes()


def test_entry_point_backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dist = tmp_path / "memstore_plugin_probe-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: memstore-plugin-probe\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[memstore.backends]\nplugged = memstore.backends.memory:open_memory\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "plugged" in known_schemes()
    assert isinstance(open_store("plugged://x", access=AccessPolicy()), InMemoryStore)


@pytest.mark.parametrize("expiry", [timedelta(0), timedelta(days=-1), 28])
def test_expiry_must_be_a_positive_timedelta(expiry: object) -> None:
    with pytest.raises(ConfigurationError):
        open_store("memory://", access=AccessPolicy(), expiry=expiry)  # type: ignore[arg-type]


def test_access_policy_is_required() -> None:
    with pytest.raises(ConfigurationError):
        open_store("memory://", access={"ana": "admin"})  # type: ignore[arg-type]


def test_memory_uri_takes_no_path() -> None:
    with pytest.raises(ConfigurationError):
        open_store("memory://somewhere", access=AccessPolicy())
