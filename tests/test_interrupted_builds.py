"""A build stopped at any point, or a record made by another build, never leaves a page stale.

Each test uses the six-page book of ``test_execution_cache`` (a copy of the project,
built with the real Makefile; its clean build made once per session, ``built_project``) and
compares what the next build publishes with a clean build of the same sources.
"""

from __future__ import annotations

import filecmp
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from test_execution_cache import LEAF_OF, build_env, built, executed, make_project, shown

pytestmark = pytest.mark.build

IMPORTERS = {name for name, leaf in LEAF_OF.items() if leaf == "leaf_a"}


@pytest.fixture
def project(tmp_path) -> Path:
    """The six-page book of test_execution_cache, in a copy of the project."""
    return make_project(tmp_path)


def _set_leaf(project: Path, value: int) -> None:
    (project / "ffnbook" / "leaf_a.py").write_text(f'"""A leaf module for the cache tests."""\n\nVALUE = {value}\n')


def _stopped_while_writing(project: Path, signum: int, tmp_path: Path) -> str:
    """Run `make html`, and send ``signum`` to all its processes (as Ctrl-C does, or a CI
    runner stopping a job) once Sphinx is writing page0. Returns the build's output."""
    marker, log = tmp_path / "writing-page0", tmp_path / "stopped-build.log"
    env = dict(build_env(project), PAUSE_WRITING_AT=str(marker))
    with open(log, "w") as out:
        proc = subprocess.Popen(
            ["make", "--no-print-directory", "html", f"PY={sys.executable}", "SETUP="],
            cwd=project,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 900
            while not marker.exists():
                assert proc.poll() is None, f"the build ended before writing page0:\n{log.read_text()[-4000:]}"
                assert time.monotonic() < deadline, "the build never reached page0"
                time.sleep(0.05)
            os.killpg(proc.pid, signum)
            proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    assert proc.returncode != 0
    return log.read_text()


def _differences(built_html: Path, clean_html: Path) -> list[str]:
    """Files one build has and the other lacks, or holds with other bytes."""

    def files(root: Path) -> set[Path]:
        return {p.relative_to(root) for p in root.rglob("*") if p.is_file()}

    built, clean = files(built_html), files(clean_html)
    return (
        [f"missing: {rel}" for rel in sorted(clean - built)]
        + [f"extra: {rel}" for rel in sorted(built - clean)]
        + [
            f"differs: {rel}"
            for rel in sorted(built & clean)
            if not filecmp.cmp(built_html / rel, clean_html / rel, shallow=False)
        ]
    )


def _kernel_folders() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("bookext-kernels-*"))


def _processes_in_group(group: int) -> set[str]:
    """The process ids (as text) of a process group, read from /proc (Linux). Another build
    on the same machine makes kernel folders too; only this group's are the test's."""
    pids = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended while the folder was read
            continue
        if int(fields[2]) == group:  # after the name: state, parent, process group
            pids.add(stat.parent.name)
    return pids


@pytest.fixture(scope="module")
def clean_html_with_leaf_2(tmp_path_factory) -> Path:
    """What a clean build publishes once leaf_a changed: built once for the three signals, in a
    copy of the book of its own (a clean build writes no path of its folder into the pages)."""
    project = make_project(tmp_path_factory.mktemp("clean-leaf-2"))
    _set_leaf(project, 2)
    built(project)
    return project / "_build" / "html"


# make test-full (four builds of the six-page book, one of them clean: ~30 s on two cores):
# make test checks the journal it relies on in-process (test_ext_incremental's pages journaled
# as unwritten), and Ctrl-C and SIGTERM stopping a build in test_ext_execution_stop.
@pytest.mark.full
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_a_build_stopped_while_writing_is_finished_by_the_next_build(
    built_project, clean_html_with_leaf_2, tmp_path, signum
):
    project = built_project
    _set_leaf(project, 2)
    out = _stopped_while_writing(project, signum, tmp_path)
    assert executed(out) == dict.fromkeys(IMPORTERS, "ffnbook/leaf_a.py changed"), out[-4000:]
    # What the issue found: the new results are recorded, the page still shows the old ones.
    assert shown(project, "page0") == "1"

    out = built(project)
    assert executed(out) == {}, out[-4000:]  # written from the records, not executed again
    assert "did not finish writing" in out
    assert {name: shown(project, name) for name in LEAF_OF} == {
        name: "2" if name in IMPORTERS else "1" for name in LEAF_OF
    }
    assert _differences(project / "_build" / "html", clean_html_with_leaf_2) == []

    out = built(project)  # and then the builds have nothing left to do
    assert "did not finish writing" not in out and executed(out) == {}


def test_a_build_stopped_while_executing_shows_the_results_it_recorded(built_project, tmp_path):
    """Stopped once the first page has executed (its record written), before writing."""
    project = built_project
    _set_leaf(project, 2)
    log = tmp_path / "stopped-build.log"
    env = build_env(project)
    records = project / "_build" / ".execution"
    before = {name: (records / f"{name}.json").stat().st_mtime_ns for name in IMPORTERS}
    folders = _kernel_folders()
    with open(log, "w") as out:
        proc = subprocess.Popen(
            ["make", "--no-print-directory", "html", f"PY={sys.executable}", "SETUP="],
            cwd=project,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 900
        while not any((records / f"{n}.json").stat().st_mtime_ns != t for n, t in before.items()):
            assert proc.poll() is None, log.read_text()[-4000:]
            assert time.monotonic() < deadline
            time.sleep(0.02)
        group = _processes_in_group(proc.pid)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    killed = {f for f in _kernel_folders() - folders if f.name.split("-")[2] in group}
    assert killed, f"the stopped build left no kernel folder of its own: {sorted(_kernel_folders() - folders)}"

    out = built(project)
    assert {name: shown(project, name) for name in LEAF_OF} == {
        name: "2" if name in IMPORTERS else "1" for name in LEAF_OF
    }, out[-4000:]
    # The killed build's kernel template could not remove its folder; the next build did.
    assert not any(f.exists() for f in killed)


# make test-full: a clean build of its own, twice at once (~40 s on a loaded machine).
@pytest.mark.full
def test_two_builds_of_one_folder_at_once_execute_each_page_once(project, tmp_path):
    env = build_env(project)
    command = ["make", "--no-print-directory", "html", f"PY={sys.executable}", "SETUP="]
    logs = [tmp_path / "first.log", tmp_path / "second.log"]
    procs = []
    for log in logs:
        with open(log, "w") as out:
            procs.append(subprocess.Popen(command, cwd=project, env=env, stdout=out, stderr=subprocess.STDOUT))
    assert [p.wait(timeout=1800) for p in procs] == [0, 0], [log.read_text()[-3000:] for log in logs]
    outs = [log.read_text() for log in logs]
    assert sorted(len(executed(out)) for out in outs) == [0, len(LEAF_OF)], outs
    assert sum("another build of" in out and "waiting for it to finish" in out for out in outs) == 1


# make test-full: three builds (~40 s on a loaded machine); the lock itself is tested in-process
# (test_ext_incremental).
@pytest.mark.full
def test_a_page_executed_by_another_build_of_the_same_folder_is_shown(built_project):
    """`make pdf` (a one-page build with its own saved environment) shares the records:
    a page it executed must not be taken as read by the next `make html`."""
    project = built_project
    _set_leaf(project, 2)
    single = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-b",
            "singlehtml",
            "-d",
            "_build/doctrees-pdf",
            "-c",
            ".",
            "-W",
            "--keep-going",
            "docs",
            "_build/singlehtml",
        ],
        cwd=project,
        env=build_env(project),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert single.returncode == 0, (single.stdout + single.stderr)[-4000:]
    assert executed(single.stdout) == dict.fromkeys(IMPORTERS, "ffnbook/leaf_a.py changed")

    out = built(project)
    assert executed(out) == {}, out[-4000:]
    assert {name: shown(project, name) for name in LEAF_OF} == {
        name: "2" if name in IMPORTERS else "1" for name in LEAF_OF
    }
