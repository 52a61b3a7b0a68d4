"""The format of what a run writes, and reading what an older memstore wrote: one place for every
difference between formats.

`results.json`, the manifest and every shard carry the format of the layout they were written
in (`FORMAT`); the tables of a run folder are in the format of its
``results.json``. A document without one is format 1: what memstore wrote before formats were
recorded. `upgrade` brings a ``results.json`` document to the current format and
`upgrade_tables` a run folder's tables; nothing else in memstore reads an older layout.

Format 1 to 2: an arm's role was not always recorded (it is given here as the built-in agents
and stores declared it when format 1 was written: ``no-memory`` the control, ``trusting`` the
harm probe, the ``naive`` store a negative control, any other a treatment), nor whether its
agent was a simulation (the four built-in stubs were), nor the sessions' role column; a run
folder could lack its failures table.

Format 2 to 3: the stub agents' parameters were one budget for the whole run
(``run.agent_config``); they are each arm's own now (``run.arms[].params``, what its agent runs
with: the budget for a simulated arm, none for any other).

Format 3 to 4: a seeded memory was paired across arms by the id its store gave it (every
memstore store numbered them alike); it is paired by its seeded key now (events' ``seed``, the
trials' ``bad_seeds`` and ``healed_seeds``). An older folder's memories keep their ids as their
seeds, so they pair as they did when it was written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from memstore.errors import ConfigurationError
from memstore.harness.records.rows import Role

if TYPE_CHECKING:  # pandas is imported where tables are upgraded: a store process never needs it
    import pandas as pd

__all__ = ["FORMAT", "format_of", "upgrade", "upgrade_tables"]

FORMAT = 4  # 1: before versions were written (no "format" key); 2: one stubs' budget for the whole run;
# 3: memories paired across arms by the id their store gave them (4: by their seeded key)


def format_of(document: Mapping[str, Any]) -> int:
    """The format a document says it was written in (1 when it says none).

    Raises:
        ConfigurationError: for a format this memstore does not know (a newer memstore's).
    """
    version = document.get("format", 1)
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= FORMAT:
        raise ConfigurationError(
            f"written in format {version!r}; this memstore reads formats 1 to {FORMAT} (a newer memstore wrote it?)"
        )
    return version


def _role_in_format_1(agent: object, store: object) -> Role:
    """An arm's role as format 1's built-in agents and stores declared it (see the module docstring)."""
    if store == "naive":
        return Role.NEGATIVE_CONTROL
    return {"no-memory": Role.CONTROL, "trusting": Role.HARM_PROBE}.get(str(agent), Role.TREATMENT)


_STUBS_IN_FORMAT_1 = ("no-memory", "trusting", "blind-trusting", "jit-verify")  # its built-in stub agents


def _arm_in_format_1(arm: object) -> object:
    """A run's arm as format 1 described it, with what its agent and store declared then."""
    if not isinstance(arm, dict):
        return arm
    role = _role_in_format_1(arm.get("agent"), arm.get("store"))
    return {"role": role.value, "simulated": arm.get("agent") in _STUBS_IN_FORMAT_1, **arm}


def upgrade(document: Mapping[str, Any]) -> dict[str, Any]:
    """A ``results.json`` document of any known format, in the current one (a new object).

    Raises:
        ConfigurationError: for a format this memstore does not know.
    """
    version = format_of(document)
    data = dict(document)
    if version == 1:
        run = data.get("run")
        if isinstance(run, dict) and isinstance(run.get("arms"), list):
            run = data["run"] = {**run, "arms": [_arm_in_format_1(a) for a in run["arms"]]}
        arms = data.get("arms")
        if isinstance(arms, dict):
            data["arms"] = {
                name: {"role": _role_in_format_1(arm.get("agent"), arm.get("store")).value, **arm}
                if isinstance(arm, dict)
                else arm
                for name, arm in arms.items()
            }
    if version <= 2:
        data["run"] = _params_per_arm(data.get("run"))
    data["format"] = FORMAT
    return data


def _params_per_arm(run: object) -> object:
    """Format 2's run-wide ``agent_config`` as each simulated arm's ``params`` (format 3)."""
    if not isinstance(run, dict):
        return run
    run = dict(run)
    budget = run.pop("agent_config", None)
    if isinstance(run.get("arms"), list):
        run["arms"] = [
            {"params": dict(budget) if isinstance(budget, dict) and arm.get("simulated") else {}, **arm}
            if isinstance(arm, dict)
            else arm
            for arm in run["arms"]
        ]
    return run


def upgrade_tables(tables: Mapping[str, pd.DataFrame], version: int) -> dict[str, pd.DataFrame]:
    """A run folder's tables, written in format ``version``, in the current one."""
    upgraded = dict(tables)
    if version == 1:
        import pandas as pd

        upgraded.setdefault("failures", pd.DataFrame())
        sessions = upgraded.get("sessions")
        if sessions is not None and not sessions.empty and "role" not in sessions:
            roles = [_role_in_format_1(a, s).value for a, s in zip(sessions.agent, sessions.store, strict=True)]
            upgraded["sessions"] = sessions.assign(role=roles)
    if version <= 3:
        events = upgraded.get("events")
        if events is not None and "seed" not in events:
            seeded = events.truth.fillna("").astype(str) != "" if "truth" in events else False
            upgraded["events"] = events.assign(seed=events.memory_id.where(seeded, "") if len(events) else [])
        trials = upgraded.get("trials")
        if trials is not None and "bad_ids" in trials and "bad_seeds" not in trials:
            upgraded["trials"] = trials.assign(bad_seeds=trials.bad_ids, healed_seeds=trials.healed_ids)
    return upgraded
