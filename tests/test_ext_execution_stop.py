"""A build that stops, because a page failed or because it was told to, stops at once and
cleanly (docs/_ext/bookext/execution/kernels.py, StopOnSignal; execution._stop_executor).

Each test builds the tiny executed book of ``tests/roots/test-execution`` with ``sphinx-build``
in a process group of its own: ``slow`` runs until it is stopped, ``fails`` raises at once,
``quick`` succeeds. Every page's kernel writes its process id to a marker folder, so the test
can check that the stop killed it. Kernels run in sessions of their own (as jupyter_client
starts them), so Ctrl-C does not reach them: the build must stop them.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from sitecheck import ROOT

from bookext.execution.kernel_template import KERNELS_FOLDER, process_exists

pytestmark = pytest.mark.build

#: How long the slow page runs unless stopped: far longer than any of these builds may take.
SLOW_SECONDS = 120
#: How long a build may take to stop, its executor and kernels included.
STOP_SECONDS = 15


def _start(book: Path, *options: str) -> subprocess.Popen:
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT / "docs" / "_ext"),
        EXECUTION_TEST_MARKERS=str(book / "markers"),
        EXECUTION_TEST_SLOW_SECONDS=str(SLOW_SECONDS),
    )
    (book / "markers").mkdir()
    command = [sys.executable, "-m", "sphinx", "-b", "html", "-j", "2", "-W", "--keep-going", "-T", *options]
    # Ctrl-C must reach the build as it would from a terminal: a test run started in the
    # background of a shell without job control ignores SIGINT, and so would its children.
    ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen(
            [*command, "src", "out"],
            cwd=book,
            env=env,
            stdout=(book / "build.log").open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    finally:
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.fixture
def book(rootdir, tmp_path) -> Path:
    shutil.copytree(rootdir / "test-execution", tmp_path / "src")
    return tmp_path


def _group(leader: int) -> set[int]:
    """The processes of a process group, from /proc (Linux)."""
    members = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        if int(fields[2]) == leader and fields[0] != "Z":  # state, parent, group
            members.add(int(stat.parent.name))
    return members


def _kernels(book: Path) -> dict[str, int]:
    """Page -> the process id of the kernel that ran it (those that started)."""
    return {marker.stem: int(marker.read_text()) for marker in (book / "markers").glob("*.pid")}


def _wait_for(condition, what, seconds: float = STOP_SECONDS) -> None:
    """Wait until ``condition()``; else fail, saying ``what()``."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what()
        time.sleep(0.05)


def _still_running(pids, book: Path) -> str:
    def command(pid: int) -> str:
        try:
            return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            return "(ended)"

    running = "\n".join(f"{pid}: {command(pid)}" for pid in sorted(pids))
    return f"still running after {STOP_SECONDS} s:\n{running}\n{(book / 'build.log').read_text()[-4000:]}"


def _assert_nothing_left(book: Path, leader: int, members: set[int], folders_before: set[Path]) -> None:
    """No process of the build's group, no kernel that ran a page, no kernel folder of the build."""
    _wait_for(lambda: not _group(leader), lambda: _still_running(_group(leader), book))
    kernels = _kernels(book)
    assert "slow" in kernels, "the slow page never started: the test proves nothing"

    def alive() -> list[int]:
        return [pid for pid in kernels.values() if process_exists(pid)]

    _wait_for(lambda: not alive(), lambda: _still_running(alive(), book))
    # Named after the process that made it (the executor); another build on the machine makes its own.
    ours = {
        folder
        for folder in set(Path(tempfile.gettempdir()).glob(KERNELS_FOLDER + "*")) - folders_before
        if int(folder.name[len(KERNELS_FOLDER) :].partition("-")[0]) in members
    }
    assert not ours, f"kernel folders left behind: {ours}"


def _kernel_folders() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob(KERNELS_FOLDER + "*"))


def test_a_failing_page_is_the_only_page_reported_and_stops_the_pages_still_running(book):
    folders = _kernel_folders()
    started = time.monotonic()
    build = _start(book)
    members: set[int] = set()
    while build.poll() is None:  # the group's members, for its kernel folders
        members |= _group(build.pid)
        time.sleep(0.05)
    seconds = time.monotonic() - started
    log = (book / "build.log").read_text()
    assert build.returncode != 0, log[-4000:]
    # The failing page, with its cell and its error; no other page blamed.
    assert re.findall(r"^\S*/(\w+)\.md: Executing notebook failed", log, flags=re.M) == ["fails"], log[-6000:]
    assert 'raise ValueError("this page fails on purpose")' in log
    assert "ValueError: this page fails on purpose" in re.sub(r"\x1b\[[0-9;]*m", "", log)
    assert not re.search(r"slow\.md: |DeadKernelError|InvalidStateError", log), log[-6000:]
    # The slow page was stopped, not waited for.
    assert seconds < SLOW_SECONDS, log[-4000:]
    _assert_nothing_left(book, build.pid, members, folders)


@pytest.mark.parametrize(
    ("signum", "to_group"),
    [(signal.SIGINT, True), (signal.SIGTERM, True), (signal.SIGTERM, False)],
    ids=["ctrl-c", "sigterm", "sigterm-to-sphinx-alone"],
)
def test_a_build_stopped_while_executing_stops_its_kernels_at_once_and_leaves_nothing(book, signum, to_group):
    """Ctrl-C reaches the whole process group; a job runner may stop only the Sphinx process,
    whose executor must then stop on its own. One page at a time: ``quick`` waits behind
    ``slow`` (started first, being long-running) and must never start."""
    (book / "src" / "fails.md").unlink()
    folders = _kernel_folders()
    build = _start(book, "-D", "ffnbook_execution_jobs=1")
    try:
        _wait_for(lambda: "slow" in _kernels(book), lambda: "the slow page never started", seconds=600)
        members = _group(build.pid)
        stopped = time.monotonic()
        if to_group:
            os.killpg(build.pid, signum)
        else:
            os.kill(build.pid, signum)
        build.wait(timeout=STOP_SECONDS)
        assert time.monotonic() - stopped < STOP_SECONDS
        _assert_nothing_left(book, build.pid, members, folders)
        assert "quick" not in _kernels(book), "a page started after the stop"
        assert "quick executed" not in (book / "build.log").read_text()
    finally:
        if build.poll() is None:
            os.killpg(build.pid, signal.SIGKILL)
            build.wait()
