"""An incremental build publishes what a clean build would (docs/_ext/bookext/builds/incremental.py),
and one build at a time uses a build folder (bookext.builds.buildlock); in-process, on tiny books."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sitecheck import build_in_process

from bookext.execution import kernel_template


def _search_index(builddir: Path) -> dict:
    text = (builddir / "html" / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(re.fullmatch(r"Search\.setIndex\((.*)\)", text.strip(), re.S).group(1))


def _published(builddir: Path, folder: str) -> set[str]:
    return {p.name for p in (builddir / "html" / folder).iterdir()} if (builddir / "html" / folder).is_dir() else set()


@pytest.fixture
def book(rootdir, tmp_path) -> Path:
    srcdir = tmp_path / "src"
    shutil.copytree(rootdir / "test-incremental", srcdir)
    return srcdir


def test_the_search_index_of_a_no_op_or_one_page_build_equals_a_clean_builds(book, tmp_path):
    builddir = tmp_path / "build"
    build_in_process(book, builddir)
    clean = _search_index(builddir)
    # The glossary's terms, the index directive's entries and the "see" entry, by page.
    assert {"gate", "expert", "expansion", "feed-forward", "router"} <= set(clean["indexentries"])

    build_in_process(book, builddir)  # nothing changed: Sphinx writes no page, and rewrites the index
    assert _search_index(builddir) == clean

    page = book / "alpha.md"
    page.write_text(page.read_text().replace("expands, then compresses", "widens, then narrows"))
    build_in_process(book, builddir)
    build_in_process(book, tmp_path / "clean")
    assert _search_index(builddir) == _search_index(tmp_path / "clean")
    assert (builddir / "html" / "searchindex.js").read_bytes() == (
        tmp_path / "clean" / "html" / "searchindex.js"
    ).read_bytes()


def test_an_image_no_page_uses_any_more_is_not_published(book, tmp_path):
    builddir = tmp_path / "build"
    build_in_process(book, builddir)
    assert _published(builddir, "_images") == {"wide.svg"}
    page = book / "alpha.md"
    page.write_text(page.read_text().replace("wide.svg", "tall.svg"))
    build_in_process(book, builddir)
    build_in_process(book, tmp_path / "clean")
    assert _published(builddir, "_images") == _published(tmp_path / "clean", "_images") == {"tall.svg"}


def test_myst_nbs_stylesheet_is_linked_alike_by_a_clean_and_an_incremental_build(book, tmp_path):
    builddir = tmp_path / "build"
    build_in_process(book, builddir)
    first = (builddir / "html" / "alpha.html").read_text()
    (book / "alpha.md").touch()
    build_in_process(book, builddir)
    assert (builddir / "html" / "alpha.html").read_text() == first
    assert re.search(r'href="_static/mystnb\.[0-9a-f]+\.css\?v=', first)


def test_pages_journaled_as_unwritten_are_read_and_written_again(book, tmp_path):
    builddir = tmp_path / "build"
    build_in_process(book, builddir)
    html = builddir / "html" / "beta.html"
    html.write_text("stale")
    # What a build stopped while writing leaves: beta read, not written.
    (builddir / "doctrees" / "ffnbook-unwritten.json").write_text('["beta"]')
    app = build_in_process(book, builddir)
    assert "reading 1 pages again that an earlier build read but did not finish writing: beta" in app._status.getvalue()
    assert "Beta" in html.read_text()
    assert not (builddir / "doctrees" / "ffnbook-unwritten.json").exists()


def test_an_unreadable_journal_reads_every_page_again(book, tmp_path):
    builddir = tmp_path / "build"
    build_in_process(book, builddir)
    (builddir / "doctrees" / "ffnbook-unwritten.json").write_text('["beta", ')
    app = build_in_process(book, builddir)
    assert "reading 3 pages again" in app._status.getvalue()


# --- one build at a time ------------------------------------------------------------------------

HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
os.pwrite(fd, b"4242\\n", 0)
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
"""


def test_a_second_build_of_a_folder_waits_for_the_first_and_says_so(tmp_path):
    srcdir = tmp_path / "src"
    srcdir.mkdir()
    (srcdir / "conf.py").write_text('extensions = ["bookext.builds.buildlock"]\n')
    (srcdir / "index.rst").write_text("Tiny\n====\n")
    builddir = tmp_path / "build"
    builddir.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(builddir / ".build.lock"), "2"], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout.readline() == "locked\n"
    started = time.monotonic()
    app = build_in_process(srcdir, builddir)
    waited = time.monotonic() - started
    holder.wait()
    status = app._status.getvalue()
    assert f"another build of {builddir} is running (process 4242); waiting for it to finish" in status
    assert waited > 1.0
    # The lock is released: a next build starts at once, in the same process too.
    started = time.monotonic()
    app = build_in_process(srcdir, builddir)
    assert "waiting" not in app._status.getvalue() and time.monotonic() - started < 30


# --- temporary kernel folders ----------------------------------------------------------------------


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_kernel_folders_of_build_processes_that_are_gone_are_removed(tmp_path):
    dead = tmp_path / f"bookext-kernels-{_dead_pid()}-abcd1234"
    alive = tmp_path / f"bookext-kernels-{os.getpid()}-abcd1234"
    other = tmp_path / "bookext-kernels-12345678"  # not of this scheme: left alone
    for folder in (dead, alive, other):
        folder.mkdir()
        (folder / "template").touch()
    kernel_template.remove_abandoned_folders(str(tmp_path))
    assert not dead.exists() and alive.exists() and other.exists()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux's /proc")
def test_a_zombie_build_process_counts_as_gone(tmp_path):
    """A killed build's process not yet reaped (a zombie) runs nothing: its kernel folder
    is removed by the next build, which may start before init reaps it."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])  # not waited for: a zombie
    deadline = time.monotonic() + 30
    while Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
        assert time.monotonic() < deadline, "the child never ended"
        time.sleep(0.05)
    folder = tmp_path / f"bookext-kernels-{process.pid}-abcd1234"
    folder.mkdir()
    assert not kernel_template.process_exists(process.pid)
    assert kernel_template.process_exists(os.getpid())
    kernel_template.remove_abandoned_folders(str(tmp_path))
    assert not folder.exists()
    process.wait()


KILL_OWNER = """
import asyncio, os, signal
from bookext.execution.kernels import KernelPool
pool = KernelPool(["json"])
asyncio.run(pool._connect())
print(pool.folder, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_the_kernel_template_removes_its_folder_when_its_build_is_killed():
    ext = Path(__file__).resolve().parents[1] / "docs" / "_ext"
    owner = subprocess.run(
        [sys.executable, "-c", KILL_OWNER],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PYTHONPATH=str(ext)),
    )
    folder = Path(owner.stdout.strip())
    assert folder.name.startswith("bookext-kernels-"), owner.stderr
    deadline = time.monotonic() + 30
    while folder.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not folder.exists()
