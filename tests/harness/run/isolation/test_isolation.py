"""Trials are kept apart from what agents can reach: templates, stores, other trials."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import pytest

from memstore.errors import ConfigurationError
from memstore.harness.run.isolation import scratch
from memstore.harness.run.runner.pool import Arm
from memstore.harness.world import build_template
from tests.harness.conftest import UNBOXED, run_arms, scenario


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's own temporary directory, for the harness and for the agents it runs."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setenv("TMPDIR", str(root))
    monkeypatch.setenv("MEMSTORE_SCRATCH", str(root))
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    monkeypatch.setattr(scratch, "_MADE", {})
    from memstore.harness.run.play import loop as trial

    monkeypatch.setattr(trial, "_TEMPLATES", {})
    return root


def _agent(tmp_path: Path, source: str) -> str:
    script = tmp_path / "agent.py"
    script.write_text(source)
    return f"command:{sys.executable} {script}"


SPY = """
import json, os, pathlib
task = json.load(open(os.environ["MEMSTORE_TASK"]))
pathlib.Path({out!r}).write_text(json.dumps({{"workdir": task["workdir"], "tmp": os.environ.get("TMPDIR")}}))
"""


def test_the_store_is_not_beside_the_working_copy(tmp_path: Path, private_tmp: Path) -> None:
    seen = tmp_path / "seen.json"
    run_arms(["api-version-moved"], [Arm(_agent(tmp_path, SPY.format(out=str(seen))), "sqlite:")], runtime=UNBOXED)
    workdir = Path(json.loads(seen.read_text())["workdir"])
    assert not list(workdir.parent.rglob("*.db"))  # nothing of a store in the trial's own folder
    assert not list(workdir.parent.parent.rglob("*.db"))  # nor among the other trials and templates
    assert workdir.parent.parent.name.startswith("memstore-run-")


TAMPER_STORE = """
import glob, os, sqlite3, tempfile
for path in glob.glob(os.path.join({tmp!r}, "memstore-stores-*", "*", "store.db")):  # the harness's TMPDIR
    conn = sqlite3.connect(path)
    conn.execute("UPDATE memories SET fact = 'API version is v9.9.9'")
    conn.commit()
"""


def test_a_store_changed_behind_the_harness_s_back_is_reported(tmp_path: Path, private_tmp: Path) -> None:
    arm = Arm(_agent(tmp_path, TAMPER_STORE.format(tmp=str(private_tmp))), "sqlite:")
    output = run_arms(["api-version-moved"], [arm], runtime=UNBOXED)
    tampered = [e for e in output.events if e.kind == "tampered"]
    assert len(tampered) == 1
    assert tampered[0].detail.startswith("the store's files changed while the agent ran (store.db")
    assert output.sessions[0].tampered == 1


def test_an_honest_agent_is_not_reported(tmp_path: Path, private_tmp: Path) -> None:
    output = run_arms(["api-version-moved"], [Arm(_agent(tmp_path, "print('hi')\n"), "sqlite:")], runtime=UNBOXED)
    assert [e for e in output.events if e.kind == "tampered"] == []


TAMPER_TEMPLATE = """
import glob, os, pathlib, tempfile
hits = glob.glob(os.path.join({tmp!r}, "memstore-run-*", "template-*", "*", "README.md"))
for path in hits:
    try:
        with open(path, "a") as out:
            out.write("PLANTED BY AN EARLIER TRIAL\\n")
        pathlib.Path({log!r}).write_text("written")
    except OSError:
        pathlib.Path({log!r}).write_text("refused")
"""


def test_a_template_changed_by_one_trial_never_reaches_the_next(tmp_path: Path, private_tmp: Path) -> None:
    log = tmp_path / "log"
    check = tmp_path / "check.py"
    check.write_text(
        "import json, os, pathlib\ntask = json.load(open(os.environ['MEMSTORE_TASK']))\n"
        f"pathlib.Path({str(tmp_path / 'saw')!r}).write_text(pathlib.Path(task['workdir'], 'README.md').read_text())\n"
    )
    arms = [
        Arm(_agent(tmp_path, TAMPER_TEMPLATE.format(log=str(log), tmp=str(private_tmp))), "memory://"),
        Arm(f"command:{sys.executable} {check}", "memory://"),
    ]
    output = run_arms(["api-version-moved"], arms, runtime=UNBOXED)
    assert log.read_text() in {"written", "refused"}  # refused where permissions hold (not for root)
    assert "PLANTED" not in (tmp_path / "saw").read_text()
    noticed = [e for e in output.events if e.kind == "tampered"]
    if log.read_text() == "written":
        assert [e.arm for e in noticed] == [arms[1].name]
        assert "template was changed by an earlier trial; it was rebuilt" in noticed[0].detail


def test_a_sealed_template_is_read_only_and_knows_when_it_changed(tmp_path: Path) -> None:
    template = build_template(scenario("api-version-moved"), tmp_path / "t")
    template.seal()
    readme = template.path / "README.md"
    assert not os.stat(readme).st_mode & 0o222
    assert template.intact()
    readme.chmod(0o644)
    readme.write_text("changed\n")
    assert not template.intact()


def test_scratch_goes_where_it_is_asked_else_to_memory_with_room_else_to_the_temp_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMSTORE_SCRATCH", str(tmp_path))
    assert scratch.scratch_base() == tmp_path
    monkeypatch.setenv("MEMSTORE_SCRATCH", str(tmp_path / "missing"))
    with pytest.raises(ConfigurationError, match=r"MEMSTORE_SCRATCH=.*missing is not a folder"):
        scratch.scratch_base()
    monkeypatch.delenv("MEMSTORE_SCRATCH")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    roomy = scratch._roomy(Path("/dev/shm"))
    assert scratch.scratch_base() == (Path("/dev/shm") if roomy else tmp_path)
    monkeypatch.setattr(scratch, "ROOM", 1 << 60)  # more than any machine has free
    assert scratch.scratch_base() == tmp_path
    monkeypatch.setattr(scratch, "ROOM", 0)
    assert not scratch._roomy(tmp_path)  # a folder on a disk is not memory, however much room
    monkeypatch.setattr(scratch, "_MEMORY", tmp_path / "missing")
    assert scratch.scratch_base() == tmp_path


def test_stale_scratch_in_the_scratch_base_is_cleaned_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base, temp = tmp_path / "base", tmp_path / "temp"
    base.mkdir()
    temp.mkdir()
    monkeypatch.setenv("MEMSTORE_SCRATCH", str(base))
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    stale = []
    for root in (base, temp):
        folder = root / "memstore-run-999999-x"
        folder.mkdir()
        (folder / ".lock").write_text("")  # no process holds it
        stale.append(folder)
    (base / "memstore-other-1-x").mkdir()  # not a kind of ours
    assert sorted(scratch.clean_stale()) == sorted(stale)
    assert [p.name for p in base.iterdir()] == ["memstore-other-1-x"]
