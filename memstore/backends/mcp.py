"""``mcp:MAPPING[?command=...]``: any MCP memory server (stdio) as a store, through a mapping.

The server is started with its command line and spoken to with the official MCP client
(`mcp.Client`, over stdio), one connection per store, kept open on a thread of its own. A
*mapping* says how the store protocol's five engine operations (`memstore.backends.foreign`)
become the server's tools; it is a small class (`ToolMapping`) with the tool calls spelled
out. A mapping of one's own is named by ``package.module:Class``, or by a name of the
``memstore.mcp_mappings`` entry-point group (`memstore.plugins`). Shipped:

- ``server-memory``: the reference ``@modelcontextprotocol/server-memory`` (npm; install with
  ``npm install -g @modelcontextprotocol/server-memory``, command ``mcp-server-memory``), a
  knowledge graph in one JSONL file (``MEMORY_FILE_PATH``, put in the store's folder). A memory
  is an entity named by its subject and id, of type ``memstore memory``, whose observations
  are the fact and the bookkeeping record; a correction is a ``supersedes`` relation;
  ``search_nodes`` is the server's search (a case-insensitive substring of a name, type or
  observation: the whole query, not its words). The graph has no users, permissions or
  expiry: every memory is everyone's and is kept until deleted. A fact that starts like a
  record (``memstore:``), or with a backslash, is kept behind one more backslash: no text a user
  stores is ever read as a record, and a record is read only from the entity it names.

``mcp:`` alone with a mapping name gets a fresh folder per trial (``{folder}`` in a command is
that folder). The server runs with a scrubbed environment: its ``PATH`` and the variables the
mapping sets, nothing of the harness's; what it writes to stderr goes to ``server.log`` there.
"""

from __future__ import annotations

import os
import shlex
import shutil
import urllib.parse
from pathlib import Path
from typing import Any, ClassVar

from memstore import plugins
from memstore.backends import StoreOptions, TrialStore, per_trial
from memstore.backends.foreign import BOOKKEEPING, ForeignStore, bookkeeping, from_bookkeeping
from memstore.backends.mcp_client import McpConnection
from memstore.backends.mcp_memstore import open_memstore_server
from memstore.errors import ConfigurationError
from memstore.model import Memory
from memstore.registry import Registry
from memstore.store import MemoryStore
from memstore.uri import StoreURI

__all__ = ["MAPPINGS", "McpConnection", "McpStore", "ServerMemory", "ToolMapping", "open_mcp"]


class ToolMapping:
    """How the store protocol becomes one MCP server's tools (see the module docstring).

    A subclass gives ``command`` (the default command line, ``{folder}`` for the store's folder),
    ``env`` (variables the server needs), what the server does natively and what is emulated,
    and the five operations over ``self.server`` (an `McpConnection`)."""

    name: ClassVar[str] = ""
    command: ClassVar[tuple[str, ...]] = ()
    install: ClassVar[str] = ""
    capabilities: ClassVar[frozenset[str]] = frozenset()
    native: ClassVar[dict[str, str]] = {}
    emulated: ClassVar[dict[str, str]] = {}

    def __init__(self, server: McpConnection) -> None:
        self.server = server

    @classmethod
    def env(cls, folder: Path) -> dict[str, str]:
        return {}

    def put(self, memory: Memory, replacing: Memory | None) -> None:
        raise NotImplementedError

    def save(self, memory: Memory) -> None:
        raise NotImplementedError

    def fetch(self, memory_id: str) -> Memory | None:
        raise NotImplementedError

    def everything(self) -> list[Memory]:
        raise NotImplementedError

    def drop(self, memory_ids: list[str]) -> None:
        raise NotImplementedError

    def find(self, query: str) -> list[Memory]:
        raise NotImplementedError


_KIND = "memstore memory"
_ESCAPE = "\\"  # before a fact that would otherwise start like a record (or like an escaped fact)


class ServerMemory(ToolMapping):
    """``@modelcontextprotocol/server-memory``'s knowledge graph (see the module docstring)."""

    name = "server-memory"
    command = ("mcp-server-memory",)
    install = "npm install -g @modelcontextprotocol/server-memory"
    capabilities = frozenset({"delete", "history", "retire", "search", "supersede"})
    native: ClassVar[dict[str, str]] = {
        "search": "search_nodes: the whole query as a case-insensitive substring of names, types, observations",
        "supersede": "a 'supersedes' relation between entities",
    }
    emulated: ClassVar[dict[str, str]] = {
        "citations": "kept in an observation (the bookkeeping record): entities have no evidence",
        "scoping": "the repository in the bookkeeping record, one graph file per store",
        "status": "superseded and retired versions kept as such in the bookkeeping record",
    }

    @classmethod
    def env(cls, folder: Path) -> dict[str, str]:
        return {"MEMORY_FILE_PATH": str(folder / "memory.jsonl")}

    @staticmethod
    def _entity_name(memory: Memory) -> str:
        return f"{memory.subject} [{memory.id}]"

    @staticmethod
    def _escaped(fact: str) -> str:
        """The observation that holds ``fact``: never one that starts like a bookkeeping record."""
        return _ESCAPE + fact if fact.startswith((BOOKKEEPING, _ESCAPE)) else fact

    @staticmethod
    def _read(entity: dict[str, Any]) -> Memory | None:
        if entity.get("entityType") != _KIND:
            return None
        observations = [o for o in entity.get("observations", []) if isinstance(o, str)]
        records = [o for o in observations if o.startswith(BOOKKEEPING)]
        facts = [o.removeprefix(_ESCAPE) for o in observations if not o.startswith(BOOKKEEPING)]
        if len(records) != 1:  # ours have exactly one: more is not a record anyone can trust
            return None
        memory = from_bookkeeping(records[0], facts[0] if facts else "")
        if memory is None or ServerMemory._entity_name(memory) != entity.get("name"):
            return None
        return memory

    def __init__(self, server: McpConnection) -> None:
        super().__init__(server)
        self._names: dict[str, str] = {}  # memory id -> its entity's name (what open_nodes takes)

    def _entities(self, result: dict[str, Any]) -> list[Memory]:
        found = [m for m in (self._read(e) for e in result.get("entities", [])) if m is not None]
        self._names.update((m.id, self._entity_name(m)) for m in found)
        return found

    def put(self, memory: Memory, replacing: Memory | None) -> None:
        entity = {
            "name": self._entity_name(memory),
            "entityType": _KIND,
            "observations": [self._escaped(memory.fact), bookkeeping(memory)],
        }
        self.server.call("create_entities", {"entities": [entity]})
        self._names[memory.id] = self._entity_name(memory)
        if replacing is not None:
            relation = {
                "from": self._entity_name(memory),
                "to": self._entity_name(replacing),
                "relationType": "supersedes",
            }
            self.server.call("create_relations", {"relations": [relation]})

    def save(self, memory: Memory) -> None:
        name = self._entity_name(memory)
        found = self.server.call("open_nodes", {"names": [name]}).get("entities", [])
        old = [o for e in found for o in e.get("observations", []) if isinstance(o, str) and o.startswith(BOOKKEEPING)]
        if old:
            self.server.call("delete_observations", {"deletions": [{"entityName": name, "observations": old}]})
        self.server.call(
            "add_observations", {"observations": [{"entityName": name, "contents": [bookkeeping(memory)]}]}
        )

    def fetch(self, memory_id: str) -> Memory | None:
        """One entity by name where its name is known (the store audit reads memories back every
        session: not the whole graph each time); else the graph, once."""
        name = self._names.get(memory_id)
        found = self._entities(self.server.call("open_nodes", {"names": [name]})) if name else self.everything()
        return next((m for m in found if m.id == memory_id), None)

    def everything(self) -> list[Memory]:
        return self._entities(self.server.call("read_graph", {}))

    def drop(self, memory_ids: list[str]) -> None:
        unknown = [i for i in memory_ids if i not in self._names]
        if unknown:
            self.everything()
        names = [self._names.pop(i) for i in memory_ids if i in self._names]
        if names:
            self.server.call("delete_entities", {"entityNames": names})

    def find(self, query: str) -> list[Memory]:
        return self._entities(self.server.call("search_nodes", {"query": query}))


MAPPINGS: Registry[type[ToolMapping]] = plugins.MCP_MAPPINGS  # ``server-memory``: memstore's ``memstore.mcp_mappings``


class McpStore(ForeignStore):
    """A `MemoryStore` on an MCP memory server, through a `ToolMapping`."""

    def __init__(self, mapping: type[ToolMapping], argv: list[str], folder: Path, options: StoreOptions) -> None:
        super().__init__(options)
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(folder), **mapping.env(folder)}
        self.mapping = mapping(McpConnection(argv, env, folder / "server.log"))
        self.capabilities = mapping.capabilities
        self.native = mapping.native  # type: ignore[misc]
        self.emulated = mapping.emulated  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"McpStore({self.mapping.name!r}, {str(self.folder)!r})"

    def close(self) -> None:
        self.mapping.server.close()

    def _put(self, memory: Memory, replacing: Memory | None) -> Memory:
        self.mapping.put(memory, replacing)
        return self.mapping.fetch(memory.id) or memory

    def _save(self, memory: Memory) -> None:
        self.mapping.save(memory)

    def _fetch(self, memory_id: str) -> Memory | None:
        return self.mapping.fetch(memory_id)

    def _namespace(self, repo: str, user: str | None) -> list[Memory]:
        return [m for m in self.mapping.everything() if m.repo == repo]

    def _drop(self, memory_ids: list[str]) -> None:
        self.mapping.drop(memory_ids)

    def _find(self, repo: str, query: str, user: str | None, limit: int) -> list[Memory]:
        return [m for m in self.mapping.find(query) if m.repo == repo]

    def _repos(self) -> list[str]:
        return sorted({m.repo for m in self.mapping.everything()})


MEMSTORE = "memstore"  # memstore's own server: `memstore.backends.mcp_memstore`, not a ToolMapping


def _params(uri: str) -> tuple[str, dict[str, str]]:
    """The mapping's name and the parameters of an ``mcp:`` URI (each given once at most)."""
    parsed = StoreURI.parse(uri)
    name = parsed.path
    params = urllib.parse.parse_qs(parsed.query, keep_blank_values=True)
    known = {"command", "folder", "store"} if name == MEMSTORE else {"command", "folder"}
    unknown = sorted(set(params) - known)
    if unknown:
        raise ConfigurationError(
            f"store URI {parsed.redacted!r}: unknown parameter(s) {', '.join(unknown)}; "
            f"known: {', '.join(sorted(known))}"
        )
    return name, {key: values[-1] for key, values in params.items()}


def _parse(uri: str) -> tuple[type[ToolMapping], str | None, str | None]:
    """The mapping, the command line and the folder an ``mcp:`` URI names."""
    name, params = _params(uri)
    mapping: Any = MAPPINGS.find(name)
    if mapping is None or not (isinstance(mapping, type) and issubclass(mapping, ToolMapping)):
        shipped = ", ".join(sorted([*MAPPINGS.names(), MEMSTORE]))
        raise ConfigurationError(
            f"store URI {uri!r}: no MCP tool mapping {name!r}; shipped: {shipped}, "
            "or package.module:Class (a ToolMapping)"
        )
    return mapping, params.get("command"), params.get("folder")


def _trial_folder(uri: str, folder: Path) -> TrialStore:
    """A trial's own server state: ``mcp:MAPPING`` with no folder gets a fresh one in ``folder``."""
    name, params = _params(uri)
    named = params.get("folder") if name == MEMSTORE else _parse(uri)[2]
    if named is not None:
        return TrialStore(uri)
    base = folder / "mcp"
    joiner = "&" if "?" in uri else "?"
    return TrialStore(f"{uri}{joiner}folder={urllib.parse.quote(str(base))}", files=(base,))


@per_trial(_trial_folder, hint="use 'mcp:MAPPING' (a private folder per trial), or put {{trial}} in ?folder=")
def open_mcp(uri: str, options: StoreOptions) -> MemoryStore:
    """Factory for ``mcp:MAPPING[?command=CMD&folder=DIR]`` (see the module docstring), and for
    ``mcp:memstore``, memstore's own server (`memstore.backends.mcp_memstore`)."""
    name, params = _params(uri)
    if name == MEMSTORE:
        return open_memstore_server(uri, params, options)
    mapping, command, folder = _parse(uri)
    if folder is None:
        raise ConfigurationError(f"store URI {uri!r}: name the server's folder with ?folder=DIR")
    argv = shlex.split(command) if command else list(mapping.command)
    argv = [part.replace("{folder}", folder) for part in argv]
    if not argv or shutil.which(argv[0]) is None:
        hint = f" (install: {mapping.install})" if mapping.install else ""
        raise ConfigurationError(f"store URI {uri!r}: the MCP server command {argv[:1]} is not found{hint}")
    return McpStore(mapping, argv, Path(folder), options)
