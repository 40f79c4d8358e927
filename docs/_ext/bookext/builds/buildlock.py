"""One build at a time in a build folder.

Two builds of one build folder (``make html`` twice, or beside ``make live`` or
``make pdf``, which share the execution records) each executed every page and
overwrote each other's saved environment and output. A build takes an exclusive lock
on ``<build>/.build.lock`` (the folder holding the output folder, the saved
environments and the records) when its configuration is read, before Sphinx loads its
saved environment, and releases it when the build has finished. A second build waits
for the first, saying which process holds the lock. The lock is an ``flock``: the
operating system releases it when the process holding it ends, however it ends
(SIGKILL included), so a stopped build never leaves a lock behind.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

LOCK = ".build.lock"
#: The lock descriptor this process holds, by lock file: one per build folder.
_HELD: dict[Path, int] = {}


def lock_path(app: Sphinx) -> Path:
    return Path(app.outdir).resolve().parent / LOCK


def take_lock(app: Sphinx, config) -> None:
    path = lock_path(app)
    # A build in this process that never finished (an in-process test app) holds nothing now.
    stale = _HELD.pop(path, None)
    if stale is not None:
        os.close(stale)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
        logger.info(
            "ffnbook: another build of %s is running (process %s); waiting for it to finish", path.parent, holder
        )
        started = time.monotonic()
        fcntl.flock(fd, fcntl.LOCK_EX)
        logger.info("ffnbook: the other build finished after %.0f s; building", time.monotonic() - started)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    _HELD[path] = fd


def release_lock(app: Sphinx, exception) -> None:
    fd = _HELD.pop(lock_path(app), None)
    if fd is not None:
        os.close(fd)  # releases the flock


def setup(app: Sphinx) -> dict:
    # Before every other config-inited handler, some of which write into the build folder.
    app.connect("config-inited", take_lock, priority=100)
    # After everything else the build does (bookext.builds.incremental's journal: priority 1000).
    app.connect("build-finished", release_lock, priority=1001)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
