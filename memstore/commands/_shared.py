"""What the CLI commands share: store options, the access file, the error boundary, safe output.

Exit status, for every command: 0 done; 1 a finding (bad memories, a failed gate, a
regression); 2 an error in what was asked (usage, configuration, a store or repository
that cannot be used), always as one line on standard error, never a traceback.
"""

from __future__ import annotations

import functools
import getpass
import os
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.text import Text

from memstore.access import Access, AccessPolicy, Actor
from memstore.errors import MemstoreError
from memstore.store import MemoryStore, open_store
from memstore.verify import GitRepository

__all__ = ["CommandError", "StoreContext", "console", "load_access", "plain", "safe", "store_options"]

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
        raise CommandError(f"cannot read the access file {path}: {exc}") from exc
    users = data.get("users")
    if not isinstance(users, dict) or set(data) - {"users"}:
        raise CommandError(f"{path}: expected only a [users.NAME] table per user")
    for name, grants in users.items():
        if not isinstance(grants, dict):
            raise CommandError(f"{path}: [users.{name}] must map repositories to levels")
        for repo, level in grants.items():
            try:
                policy.grant(name, repo, Access[str(level).upper()])
            except KeyError as exc:
                raise CommandError(
                    f"{path}: users.{name}.{repo}: level must be none, read, write or admin, got {level!r}"
                ) from exc
            except MemstoreError as exc:
                raise CommandError(f"{path}: users.{name}: {exc}") from exc
    return policy


class CommandError(click.ClickException):
    """An error in what the command was asked to do: one line on standard error, exit status 2."""

    exit_code = 2


_CONTROL = {c: f"\\x{c:02x}" for c in [*range(0x20), *range(0x7F, 0xA0)] if chr(c) not in "\n\t"}
_CONTROL.update({c: f"\\u{c:04x}" for c in [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]})


def safe(text: object) -> str:
    """``text`` with control and bidirectional-override characters shown as escapes: data from a
    store or a repository never moves the reader's cursor, colours the terminal or reorders a line."""
    return str(text).translate(_CONTROL)


def plain(text: object) -> Text:
    """``text`` for a rich table or console, shown as it is: never read as markup or emoji codes
    (a subject such as ``Routes live under [/api]`` is data, not a style), control characters escaped."""
    return Text(safe(text))


def console(*, stderr: bool = False, width: int = 160) -> Console:
    """A console for tables and text: ``COLUMNS`` wide when that is set, else the terminal's
    width on a terminal (long text wraps between words there); elsewhere (a pipe, a CI log)
    tables are ``width`` columns and a line of text stays one line, for grep."""
    stream = sys.stderr if stderr else sys.stdout
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) >= 20:
        chosen, soft = int(columns), False
    elif stream.isatty():
        chosen, soft = None, False
    else:
        chosen, soft = width, True
    return Console(file=stream, soft_wrap=soft, width=chosen, emoji=False, markup=False, highlight=False)


class StoreContext:
    """The store and actor a command acts with.

    ``read_only``: the command only reads (the store is opened read-only, never created);
    ``create``: the command may create a store that does not exist yet (only commands that
    store do; the others name a store that must be there).
    """

    def __init__(
        self, store_uri: str, user: str, access_file: Path | None, *, read_only: bool = False, create: bool = False
    ) -> None:
        self.actor = Actor(user)
        self.access = load_access(access_file, user)
        self._open = functools.partial(open_store, store_uri, access=self.access, read_only=read_only, create=create)

    @functools.cached_property
    def store(self) -> MemoryStore:
        """The store, opened when first used (a command checks its other input first)."""
        return self._open()


def store_options(*, read_only: bool = False, create: bool = False) -> Callable[[F], F]:
    """Add ``--store``, ``--as`` and ``--access`` and open the store as the command needs it."""

    def decorate(command: F) -> F:
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
            ctx = StoreContext(store_uri, user, access_file, read_only=read_only, create=create)
            return command(ctx, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate


def repository_name(repo: GitRepository, name: str | None) -> str:
    """The repository's ``owner/name``: as given, or read off its ``origin`` remote; never guessed."""
    if name is not None:
        return name
    found = repo.origin_name()
    if found is None:
        raise CommandError(f"cannot tell the owner/name of {repo.path} from its origin remote; pass --name OWNER/NAME")
    click.echo(safe(f"repository {found} (from the origin remote; --name to choose another)"), err=True)
    return found
