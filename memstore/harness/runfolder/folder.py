"""`RunFolder`: a run folder and the run it holds, the one object the commands open.

A new run is made in a folder (`RunFolder.create`), an unfinished one is opened to be finished
(`RunFolder.resume`) and a finished one read back (`RunFolder.open`); ``memstore eval`` takes
its folder's lock and opens it in one step (`RunFolder.claim`), and the parts of a run made on
several machines are assembled into a new folder (`RunFolder.merged`: every shard checked,
copied, and the units' rows read back in unit order). Running and reporting are the pipeline's
(`memstore.harness.evaluate`), which takes a `RunFolder`.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Sequence, Set
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from memstore.errors import BadShard, ConfigurationError, RunFolderError, ScenarioError
from memstore.harness.run import RunConfig, RunOutput, check_config, fitted_workers, merge_outputs, units
from memstore.harness.runfolder.lock import hold
from memstore.harness.runfolder.manifest import MANIFEST, new_folder, prepare_folder, read_manifest, write_manifest
from memstore.harness.runfolder.recipe import IDENTITY, Recipe, same_run
from memstore.harness.runfolder.shards import check_shard, shard_path, unit_id
from memstore.harness.scenarios import scenario_set_hash

__all__ = ["RunFolder"]


@dataclass(frozen=True)
class RunFolder:
    """A run folder and its run.

    Attributes:
        path: the folder.
        recipe: the run as its options describe it (what ``manifest.json`` keeps).
        config: the run itself, its scenarios loaded.
        resumed: opened to finish the run it holds (its manifest is written already).
    """

    path: Path
    recipe: Recipe
    config: RunConfig
    resumed: bool = False

    @property
    def shards(self) -> Path:
        return self.path / "shards"

    def kept(self) -> tuple[int, int]:
        """How many of the run's units have their shard in the folder (what ``--resume`` keeps), of how many."""
        every = units(self.config)
        return sum(shard_path(self.shards, unit).is_file() for unit in every), len(every)

    @classmethod
    def create(cls, recipe: Recipe, path: Path, *, overwrite: bool = False) -> RunFolder:
        """A new run in ``path``, which must be empty unless ``overwrite`` replaces a run folder there.

        Raises:
            RunFolderError: a folder that holds something else; ConfigurationError: a run that cannot be made.
        """
        config = _config(recipe)
        prepare_folder(path, overwrite)
        return cls(path, recipe, config)

    @classmethod
    def open(cls, path: Path) -> RunFolder:
        """The run folder at ``path``, checked against what made it.

        Raises:
            RunFolderError: a folder with no manifest, of another engine, or whose scenarios changed.
        """
        recipe, recorded = read_manifest(path)
        try:
            config = _config(recipe)
        except (ConfigurationError, ValueError, TypeError) as exc:
            raise RunFolderError(f"{path}: its {MANIFEST} describes a run that cannot be made: {exc}") from exc
        if scenario_set_hash(config.scenarios) != recorded:
            raise RunFolderError(f"the scenarios of {path} changed since it was made: start a new run")
        return cls(path, recipe, config)

    @classmethod
    def resume(cls, path: Path, given: Recipe | None = None, explicit: Set[str] = frozenset()) -> RunFolder:
        """The run in ``path``, to be finished. The options of ``given`` the user set (``explicit``)
        that only say how it runs (workers, executor, timeouts) apply; one that names another run is refused.

        Raises:
            RunFolderError: not a run folder, another engine's, or asked to be another run.
        """
        found = cls.open(path)
        if given is None:
            return replace(found, resumed=True)
        asked = Recipe(**{**found.recipe.to_json(), **{k: getattr(given, k) for k in explicit}})
        same_run(found.recipe, asked, "asked for now")
        if explicit - set(IDENTITY):
            return cls(path, asked, _config(asked), resumed=True)
        return replace(found, resumed=True)

    @classmethod
    @contextmanager
    def claim(
        cls, given: Recipe, *, out: Path | None, resume: Path | None, explicit: Set[str], overwrite: bool = False
    ) -> Iterator[RunFolder]:
        """``memstore eval``'s folder, held for the block: the run to finish in ``resume``, or a new
        one in ``out`` (default ``reports/runs/<time>-seed<S>``). Its workers are fitted to its
        work unless ``explicit`` says they were given, and its agents and stores are checked.

        Raises:
            RunFolderError: the folder is in use, or cannot be used so; ConfigurationError: a run
                that cannot be made, or an agent or store that cannot be used.
        """
        target = resume or out or new_folder(given.seed)
        with hold(target):  # before the folder is read or cleared: a second run there is refused
            if resume is None:
                found = cls.create(given, target, overwrite=overwrite)
            elif out is not None and out.resolve() != resume.resolve():
                raise RunFolderError("--resume names the run folder: leave out --out")
            else:
                found = cls.resume(resume, given, explicit)
            if "workers" not in explicit:  # the default: no more processes than the run has work for
                found = replace(found, config=replace(found.config, workers=fitted_workers(found.config)))
            check_config(found.config)  # a store or an agent that cannot be used is refused before a word of the run
            yield found

    def begin(self) -> None:
        """Everything was checked and the run starts: a new run's manifest is written (a resumed
        run's is there already)."""
        if not self.resumed:
            write_manifest(self.path, self.recipe, self.config)

    @classmethod
    @contextmanager
    def merged(
        cls, parts: Sequence[Path], out: Path, *, overwrite: bool = False
    ) -> Iterator[tuple[RunFolder, RunOutput]]:
        """One run in ``out`` from the shards of ``parts`` (folders of the same run), with every
        unit's rows; ``out`` holds the shards too (it can be merged or resumed again). The parts
        are held for reading and ``out`` for writing throughout the block.

        Raises:
            RunFolderError: ``out`` is one of the parts, folders of different runs, a damaged or
                misplaced shard, a unit in none of the parts, or a folder in use.
        """
        if out.resolve() in {p.resolve() for p in parts}:
            raise RunFolderError("--out must be a new folder, not one of the runs merged")
        with ExitStack() as held:  # the parts are read while no eval writes them; out is this merge's alone
            for part in parts:
                held.enter_context(hold(part, reading=True))
            first = cls.open(parts[0])
            for other in parts[1:]:
                same_run(first.recipe, cls.open(other).recipe, f"in {other}")
            sources, output = first._gathered(parts)
            held.enter_context(hold(out))
            prepare_folder(out, overwrite)
            merged = cls(out, first.recipe, first.config)
            merged.begin()
            for source in sources:
                target = merged.shards / source.name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)
            yield merged, output

    def _gathered(self, parts: Sequence[Path]) -> tuple[list[Path], RunOutput]:
        """The shard of each unit of this run in ``parts`` (the first found) and their rows, in
        unit order; a damaged or misplaced shard in any part is refused, not skipped."""
        sources, found, missing = [], [], []
        for unit in units(self.config):
            first: tuple[Path, RunOutput] | None = None
            for part in parts:
                path = shard_path(part / "shards", unit)
                if not path.is_file():
                    continue
                try:
                    rows = check_shard(path, unit_id(unit))
                except BadShard as exc:
                    raise RunFolderError(f"{part}: a bad shard ({exc}); not merging it") from exc
                first = first or (path, rows)
            if first is None:
                missing.append(f"{unit.arm.name} {unit.scenario.name}#{unit.trial}")
            else:
                sources.append(first[0])
                found.append(first[1])
        if missing:
            raise RunFolderError(
                f"{len(missing)} unit(s) are in none of the folders (e.g. {', '.join(missing[:3])}): "
                "finish them with `memstore eval --resume RUN`"
            )
        return sources, merge_outputs(found)


def _config(recipe: Recipe) -> RunConfig:
    """The run ``recipe`` describes; scenario files with problems are sent to the validator."""
    try:
        return recipe.config()
    except ScenarioError as exc:
        raise ConfigurationError(f"the scenarios have problems; run `memstore scenarios validate`:\n{exc}") from exc
