"""What the CLI commands share: store options, the access file, and the error boundary."""

from __future__ import annotations

import functools
import getpass
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from memstore.access import Access, AccessPolicy, Actor
from memstore.errors import MemstoreError
from memstore.store import MemoryStore, open_store

__all__ = ["StoreContext", "load_access", "store_options", "store_options_exit_2"]

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_STORE = "sqlite:memstore.db"


def _default_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "operator"


def load_access(path: Path | None, user: str) -> AccessPolicy:
    """The policy in a TOML access file, or, with none, ``user`` as admin of every repository.

    The file maps users to repository patterns and levels::

        [users.ana]
        "acme/api" = "admin"
        "acme/*" = "read"
    """
    policy = AccessPolicy()
    if path is None:
        return policy.grant(user, "*", Access.ADMIN)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise click.ClickException(f"cannot read the access file {path}: {exc}") from exc
    users = data.get("users")
    if not isinstance(users, dict) or set(data) - {"users"}:
        raise click.ClickException(f"{path}: expected only a [users.NAME] table per user")
    for name, grants in users.items():
        if not isinstance(grants, dict):
            raise click.ClickException(f"{path}: [users.{name}] must map repositories to levels")
        for repo, level in grants.items():
            try:
                policy.grant(name, repo, Access[str(level).upper()])
            except KeyError as exc:
                raise click.ClickException(
                    f"{path}: users.{name}.{repo}: level must be none, read, write or admin, got {level!r}"
                ) from exc
            except MemstoreError as exc:
                raise click.ClickException(f"{path}: users.{name}: {exc}") from exc
    return policy


class _Failure(click.ClickException):
    """A failure, for commands whose exit status 1 reports a finding."""

    exit_code = 2


class StoreContext:
    """The store and actor a command acts with."""

    def __init__(self, store_uri: str, user: str, access_file: Path | None) -> None:
        self.actor = Actor(user)
        self.access = load_access(access_file, user)
        self.store: MemoryStore = open_store(store_uri, access=self.access)


def store_options(command: F) -> F:
    """Add ``--store``, ``--as`` and ``--access``, and translate library errors into CLI errors."""
    return _store_options(command, error_exit=1)


def _store_options(command: F, *, error_exit: int) -> F:

    @click.option(
        "--store",
        "store_uri",
        envvar="MEMSTORE_STORE",
        default=DEFAULT_STORE,
        show_default=True,
        help="Store URI (env MEMSTORE_STORE), e.g. sqlite:///abs/path.db.",
    )
    @click.option(
        "--as",
        "user",
        envvar="MEMSTORE_USER",
        default=_default_user,
        show_default="the login name",
        help="Act as this user (env MEMSTORE_USER).",
    )
    @click.option(
        "--access",
        "access_file",
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        default=None,
        help="TOML file of users' access levels. Default: the acting user is admin of every repository.",
    )
    @functools.wraps(command)
    def wrapper(store_uri: str, user: str, access_file: Path | None, **kwargs: Any) -> Any:
        try:
            ctx = StoreContext(store_uri, user, access_file)
            return command(ctx, **kwargs)
        except MemstoreError as exc:
            raise (click.ClickException if error_exit == 1 else _Failure)(str(exc)) from exc

    return wrapper  # type: ignore[return-value]


def store_options_exit_2(command: F) -> F:
    """`store_options` for commands whose exit status 1 means a finding, not a failure."""
    return _store_options(command, error_exit=2)
