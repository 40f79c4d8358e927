"""Never-stale, incremental notebook execution: the one place where the book's execution rules live.

When a page executes again
--------------------------
A notebook page is executed again by the next build if, and only if, one of these
changed since it last executed successfully:

* its own code cells (their source or cell metadata; editing prose does not count);
* a project file that its execution actually used, as recorded inside its kernel:
  a module it imported (``sys.modules`` after the last cell: ``ffnbook/moe.py``, and
  ``ffnbook/__init__.py`` with every module that one imports), a file it opened for
  reading or tried to (an audit hook on ``open``: ``ffnbook/data/models.csv``), or the
  names in a folder it listed (not counting folders on ``sys.path``, which the import
  system lists for itself);
* ``requirements.txt``, the Python version or the kernels' thread settings.

When in doubt it executes: no record, an unreadable record or one of an older format,
a kernel that could not report what it used, or a used file that was modified while
the page was running.

A *project file* is one inside the project (the folder of ``conf.py``) or the source
folder, outside the build folder and the Python installation. Files elsewhere,
installed packages included, are taken to change only with ``requirements.txt``.
Only what Python code opens is seen: a file read by C code that bypasses Python's
``open`` is not recorded.

Editing a page's prose re-renders that page without executing it. Editing the book's
build machinery (``docs/_ext``, ``docs/_static``, ``docs/_templates``,
``docs/glossary.yml``) re-renders every page and executes none. ``make clean html``
executes everything. The build log names each page it executes and why, e.g.
``ffnbook: executing mixture-of-experts (ffnbook/moe.py changed)``.

Why not myst-nb's own cache
---------------------------
myst-nb's ``cache`` mode keys each page on its code cells alone (jupyter-cache's
notebook hash): an edited ffnbook module or data file a page imports or reads leaves
its old outputs in place, so the site would show numbers the current code no longer
computes (upstream: executablebooks/MyST-NB#621 for files a cell loads,
jupyter-book/mystmd#2885 for declaring such dependencies; neither tracks what a page
actually used). Its SQLite store is also shared by every ``-j`` worker, and its
``truncate_caches`` could delete a record another worker had just added. This module
keeps myst-nb's ``cache`` mode and its reading of outputs, and replaces the store and
the staleness rule.

Where the parts live
--------------------
* :mod:`bookext.execution.records` -- the policy, pure functions and files only: what a page's
  outputs depend on, why a record is stale, the record store.
* :mod:`bookext.execution.kernels` and ``kernel_template.py`` -- the processes: kernels forked
  from a warm template, run several at a time; every jupyter_client override is there
  (checked by tests/test_upstream_contracts.py).
* :mod:`bookext.execution.mystnb_adapter` -- the one place that plugs into myst-nb (its ``cache``
  mode client, and reading a page as myst-nb will); every myst-nb internal is there.
* This module -- the Sphinx side: one build's state (:class:`Build`), which pages
  execute and when (in a child process beside reading), and the Sphinx event handlers.

How it works
------------
* **Records.** ``<build>/.execution/<page>.json`` holds, per page: the hash of its code
  cells, the SHA-256 of every project file it used, the requirements and Python
  version, the packages its code imported (torch or not: what a reader's notebook installs,
  :func:`imported_packages`), its outputs, and a SHA-256 digest of all of that. A record is written whole
  to a temporary file and renamed into place, and nothing is ever truncated or indexed
  in common, so parallel readers and writers cannot corrupt or delete one another's
  records. This store serves myst-nb's ``cache`` mode in place of jupyter-cache, whose
  ``truncate_caches`` could delete a record another ``-j`` worker had just added.
* **Verified records.** A record that is not whole JSON, names another page, does not
  match its digest (edited by hand, damaged) or does not fit its page (outputs for
  another number of code cells) is discarded when read, with one line in the log
  naming the page, the file and the fault, and the page executes again: such a build
  heals and succeeds, and never publishes the altered numbers. (A log line, not a Sphinx
  warning, which would fail the ``-W`` build that healed.)
* **Execution beside reading.** Once Sphinx knows which pages it will read, the main
  process decides which notebooks must execute and forks a child that runs them, as
  many at a time as ``-j`` allows (``ffnbook_execution_jobs``), longest first (by their
  last run; with none, pages whose front matter says ``ffnbook: {long_running: true}``
  first), while Sphinx reads the other pages (the API page's autodoc, for one); the
  reader of an executing page waits for its result. When more pages must execute than
  can run at once, each gets a fresh kernel forked from a template that has already
  imported ``ffnbook_kernel_preload`` and no project code (:mod:`bookext.execution.kernels`);
  otherwise kernels start from scratch. Every kernel computes with one BLAS/OpenMP
  thread (:func:`bookext.execution.kernel_template.kernel_threads` says why). A page found stale
  while being read (edited
  during the build) is executed there. Where the child cannot be forked (threads
  running), the pages execute first, then Sphinx reads.
* **Re-reading.** A page whose record is stale is re-read even when its source did not
  change, and so is a page whose record is not the one it was last read from (another
  build sharing the records executed it: ``make pdf``, or a build stopped after executing
  it); a hash over the build machinery is kept in Sphinx's environment, and when it
  changes every page is re-read (rendered again from its record). A page read but not
  yet written when a build stopped is read again by the next one (:mod:`bookext.builds.incremental`).
* **Failures.** Every failing page is reported with the failing cell's traceback as soon
  as it has run; reading the first one then stops the build (``nb_execution_raise_on_error``).
  A failed page leaves no record (only a note for this build's reader), so it executes
  again. The Makefile deletes the saved environment when a build fails, so the next build
  reports the warnings of pages it would otherwise not re-read.
* **Stopping.** A build that ends before reading is done (a failing page, an error) stops
  the executor with SIGTERM; Ctrl-C (SIGINT to the process group) and SIGTERM stop it
  themselves, and so does the end of the build's process. Stopped, it kills every kernel,
  closes the template (its folder removed), starts no other page and reports none it cut
  short: only pages that failed on their own are reported (:class:`bookext.execution.kernels.StopOnSignal`).
  After reading, the executor has run every page and ends by itself; it is waited for.
* **Quiet kernels.** Kernels log errors only (an IPython profile in the build folder):
  each start would otherwise warn that local TCP is not encrypted, hiding real warnings.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
import uuid
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from sphinx.application import Sphinx
from sphinx.util import logging

from .kernel_template import kernel_threads, remove_abandoned_folders
from .mystnb_adapter import Engine, failure_message, notebook_of, serve_cache_mode_from_records
from .records import (
    MODIFIED_DURING_RUN,
    RECORD_FORMAT,
    STORE,
    Checker,
    RecordStore,
    code_hash,
    file_digest,
    listing_digest,
    record_mismatch,
    record_outputs,
    record_stamp,
    rendering_hash,
    shown_path,
)

logger = logging.getLogger(__name__)

# --- one build's state (set in the main process; forked readers inherit it) ------------------


@dataclass
class Result:
    """One page's execution in this build, as the page's reader needs it."""

    shown: dict | None  # what the page shows (its record's outputs) when it succeeded
    error: str | None = None  # the exception's class name when it failed
    traceback: str | None = None
    started: float = 0.0
    seconds: float = 0.0
    reported: bool = False  # the failure is in the build's log already
    exception: BaseException | None = None  # the failure itself, when it happened in this process


@dataclass
class Build:
    store: RecordStore
    srcdir: Path
    roots: list[str]  # where project files live
    excluded: list[str]  # inside a root but not project files: the build folder, the Python installation
    requirements: Path
    threads: dict = field(default_factory=dict)  # every kernel's thread settings (kernel_threads)
    token: str = field(default_factory=lambda: uuid.uuid4().hex)  # marks this build's results
    executed: dict = field(default_factory=dict)  # docname -> (code hash, Result), run by this process
    pending: dict = field(default_factory=dict)  # docname -> code hash, run by the executor process
    executor: tuple[int, int] | None = None  # that process: (pid, pidfd)
    process: int = field(default_factory=os.getpid)  # the build's own (Sphinx's main) process

    def finished(self, docname: str, code: str, outcome, *, reported: bool) -> Result:
        """Record an execution: for the next builds (a success) and for this build's readers."""
        if outcome.error:
            result = Result(
                None, outcome.error, outcome.traceback, outcome.started, outcome.seconds, reported, outcome.exception
            )
            self.store.write_failure(
                docname,
                {
                    "build": self.token,
                    "code": code,
                    "error": result.error,
                    "traceback": result.traceback,
                    "started": result.started,
                    "seconds": result.seconds,
                    "reported": reported,
                },
            )
        else:
            record = self.record(docname, code, outcome)
            self.store.write(docname, record)
            result = Result(record)
        self.executed[docname] = (code, result)
        return result

    def result(self, docname: str, code: str) -> Result | None:
        """This build's execution of the page (waiting for the executor if it runs it); else None."""
        code_then, result = self.executed.get(docname, (None, None))
        if code_then == code:
            return result
        if self.pending.get(docname) != code or self.executor is None:
            return None
        _, pidfd = self.executor
        while True:
            ended = bool(select.select([pidfd], [], [], 0.05)[0])  # before looking: no result is missed
            result = self.recorded(docname, code)
            if result is not None or ended:
                return result  # None: the executor is gone without a result, the reader executes the page

    def recorded(self, docname: str, code: str) -> Result | None:
        """The result the executor recorded for this code of the page in this build, if any yet."""
        failure = self.store.read_failure(docname)
        if failure and failure.get("build") == self.token and failure.get("code") == code:
            return Result(
                None,
                failure["error"],
                failure["traceback"],
                failure["started"],
                failure["seconds"],
                failure["reported"],
            )
        record = self.store.read(docname)
        if record and record.get("build") == self.token and record.get("code") == code:
            return Result(record)
        return None

    def usable_record(self, docname: str, notebook) -> dict | None:
        """The page's record if it can give this notebook its outputs; else it is discarded."""
        record = self.store.read(docname)
        problem = None if record is None else record_mismatch(notebook, record)
        if problem is not None:
            self.store.discard(docname, f"it does not match the page: {problem}")
            return None
        return record

    def docname(self, path: Path) -> str:
        return str(PurePosixPath(Path(path).resolve().relative_to(self.srcdir).with_suffix("").as_posix()))

    def is_project_file(self, path: str) -> bool:
        return (
            path.startswith(tuple(os.path.join(r, "") for r in self.roots))
            and not path.startswith(tuple(os.path.join(e, "") for e in self.excluded))
            and "__pycache__" not in Path(path).parts
        )

    def record(self, docname: str, code: str, outcome) -> dict:
        """The record of a successful execution (one that never counts as fresh when the
        kernel could not say what it used)."""
        used = outcome.used or {"modules": [], "read": [], "written": [], "listed": []}
        written = set(used["written"])
        files = {}
        for path in sorted(set(used["modules"]) | set(used["read"])):
            if not self.is_project_file(path):
                continue
            digest = file_digest(Path(path))
            try:
                # An author's edit during the run: the page may have seen either version.
                if path not in written and os.stat(path).st_mtime > outcome.started:
                    digest = MODIFIED_DURING_RUN
            except OSError:
                pass
            files[path] = digest
        folders = {p: listing_digest(Path(p)) for p in used["listed"] if self.is_project_file(p)}
        return {
            "format": RECORD_FORMAT,
            "docname": docname,
            "build": self.token,
            "code": code,
            "python": sys.version,
            "requirements": file_digest(self.requirements),
            "threads": self.threads,
            "untracked": outcome.used is None,
            "files": files,
            "folders": folders,
            "imported": used.get("imported", []),
            **record_outputs(outcome),
        }


_BUILD: Build | None = None
#: docname -> stamp of the record a page being read in this process shows (see _note_shown).
_SHOWN: dict[str, str] = {}


# --- executing before reading -------------------------------------------------------------------

#: The expected run time of a page with no record and no hint: longer than any recorded one.
UNKNOWN_SECONDS = 1e9


def _run(docname, notebook, nb_config, path: Path, expected: float | None):
    from .kernels import Run

    cwd = tempfile.mkdtemp(prefix="bookext-run-") if nb_config.execution_in_temp else str(Path(path).parent)
    if expected is None:
        # No record says how long the page takes: it starts before the pages with one, and
        # a page whose front matter says ``ffnbook: {long_running: true}`` before the rest.
        hint = notebook.metadata.get("ffnbook", {})
        expected = float("inf") if isinstance(hint, dict) and hint.get("long_running") is True else UNKNOWN_SECONDS
    return Run(docname, notebook, cwd, nb_config.execution_timeout, nb_config.execution_allow_errors, expected)


def _execute_now(build: Build, docname, notebook, nb_config, path: Path):
    """Execute one page found stale while it is read (myst-nb's client asks, through :class:`Engine`)."""
    run = _run(docname, notebook, nb_config, path, None)
    return _execute(build, [run], jobs=1, preload=None)[docname]


def _execute(build: Build, runs: list, *, jobs: int, preload: list[str] | None, report=None) -> dict:
    from .kernels import execute_notebooks

    def note(reason: str) -> None:
        logger.info("ffnbook: some kernels started from scratch: %s", reason)

    try:
        return execute_notebooks(
            runs,
            jobs=jobs,
            roots=build.roots,
            excluded=build.excluded,
            preload=preload,
            env=build.threads,
            report=report,
            note=note,
            # A process forked from the build's (the executor, Sphinx's parallel readers)
            # executes only while the build runs: killed, it can no longer use the results.
            owner=build.process if os.getpid() != build.process else None,
        )
    finally:
        for run in runs:
            if Path(run.cwd).name.startswith("bookext-run-"):
                shutil.rmtree(run.cwd, ignore_errors=True)


def _stale_runs(build: Build, env, docnames: list[str]) -> tuple[list, dict, dict, dict]:
    """The notebook pages among ``docnames`` that must execute: their runs, and per page why,
    its code hash and its myst-nb configuration (``env.ffnbook_notebooks`` is kept up to date)."""
    notebooks: set[str] = getattr(env, "ffnbook_notebooks", set())
    checker = Checker(build.requirements, build.threads)
    runs, reasons, codes, configs = [], {}, {}, {}
    for docname in docnames:
        found = notebook_of(env, docname)
        if found is None:
            notebooks.discard(docname)
            continue
        notebooks.add(docname)
        notebook, nb_config, path = found
        record = build.usable_record(docname, notebook)
        codes[docname], configs[docname] = code_hash(notebook, nb_config), nb_config
        reason = checker.stale(record, codes[docname])
        if reason is not None:
            expected = record.get("seconds") if isinstance(record, dict) else None
            runs.append(_run(docname, notebook, nb_config, path, expected))
            reasons[docname] = reason
    env.ffnbook_notebooks = notebooks
    return runs, reasons, codes, configs


def _execute_outdated_notebooks(app: Sphinx, env, docnames: list[str]) -> None:
    build = _BUILD
    if build is None:
        return
    runs, reasons, codes, configs = _stale_runs(build, env, docnames)
    if not runs:
        return
    notebooks = env.ffnbook_notebooks
    jobs = app.config.ffnbook_execution_jobs or max(1, app.parallel)
    # A template pays for all its imports before the first kernel starts: that is worth it
    # only when more pages must execute than can run at once.
    preload = [m for m in app.config.ffnbook_kernel_preload if m] if len(runs) > jobs else None
    logger.info("ffnbook: executing %d of %d notebook pages, %d at a time", len(runs), len(notebooks), jobs)
    for docname in sorted(reasons):
        logger.info("ffnbook: executing %s (%s)", docname, reasons[docname])

    def finished(run, outcome) -> None:
        # A failure is printed at once when it will stop the build (the first failing page
        # read does), so that every failing page is shown; otherwise its reader warns.
        reported = configs[run.key].execution_raise_on_error
        build.finished(run.key, codes[run.key], outcome, reported=reported)
        if outcome.error and reported:
            print(f"{env.doc2path(run.key)}: {failure_message(outcome, configs[run.key])}", file=sys.stderr, flush=True)
        elif outcome.error:
            logger.info("ffnbook: %s failed after %.2f s", run.key, outcome.seconds)
        elif outcome.used is None:
            logger.info(
                "ffnbook: %s executed in %.2f s; its kernel could not report what it used, "
                "so it will execute again next time",
                run.key,
                outcome.seconds,
            )
        else:
            logger.info(
                "ffnbook: %s executed in %.2f s (%s)",
                run.key,
                outcome.seconds,
                "forked kernel" if outcome.forked else "new kernel",
            )

    def execute_all() -> None:
        start = time.perf_counter()
        _execute(build, runs, jobs=jobs, preload=preload, report=finished)
        logger.info("ffnbook: executed %d notebook pages in %.1f s", len(runs), time.perf_counter() - start)

    if not _can_fork():
        logger.info("ffnbook: executing before reading (no child process: threads are running)")
        return execute_all()
    # Execute in a child process while this one reads the other pages (the API page's
    # autodoc, for one); a page's reader waits for its result (Build.result).
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            # Stopped by SIGINT or SIGTERM (Ctrl-C reaches the whole process group), or when
            # the build's process ends without stopping it (killed): see kernels.StopOnSignal.
            execute_all()
            status = 0
        except KeyboardInterrupt:  # Ctrl-C: its kernels are gone; Sphinx says it was interrupted
            status = 128 + signal.SIGINT
        except BaseException:  # noqa: BLE001 - reported, then the readers execute what is missing
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
    build.executor = (pid, os.pidfd_open(pid))
    build.pending = {run.key: codes[run.key] for run in runs}
    docnames[:] = [d for d in docnames if d not in build.pending] + [d for d in docnames if d in build.pending]


def _can_fork() -> bool:
    """A child may run the kernels only if this process has no other thread (fork would copy
    a lock another thread holds) and the pidfd the readers wait on exists."""
    return hasattr(os, "fork") and hasattr(os, "pidfd_open") and threading.active_count() == 1


#: How long the executor may take to end once every page it ran has its result (its
#: kernels shutting down, the template closing: well under a second) before it is stopped.
EXECUTOR_TEARDOWN_SECONDS = 30
#: How long a stopped executor may take to kill its kernels and exit before it is killed.
EXECUTOR_STOP_SECONDS = 10


def _join_executor(app: Sphinx, env) -> None:
    """After reading: the executor has run every page it had (each page's reader waited for
    its result) and is ending by itself; it is stopped at once only if it still runs a page
    no reader waits for (edited during the build, so its reader executed it)."""
    build = _BUILD
    if build is not None and build.executor is not None:
        unfinished = [d for d, code in build.pending.items() if build.recorded(d, code) is None]
        _end_executor(build, grace=0 if unfinished else EXECUTOR_TEARDOWN_SECONDS)


def _stop_executor(app: Sphinx, exception) -> None:
    """When the build ends before reading is done (a failing page, an error): the executor stops
    now, its kernels killed, and no page it cut short is reported."""
    build = _BUILD
    if build is not None and build.executor is not None:
        _end_executor(build, grace=0)


def _end_executor(build: Build, *, grace: float) -> None:
    """Wait ``grace`` seconds for the executor to end; then stop it with SIGTERM (it kills its
    kernels and exits: kernels.StopOnSignal), and kill it if that takes too long."""
    pid, pidfd = build.executor
    build.executor = None
    try:
        for signum, seconds in ((None, grace), (signal.SIGTERM, EXECUTOR_STOP_SECONDS), (signal.SIGKILL, None)):
            if signum is not None:
                signal.pidfd_send_signal(pidfd, signum)
            if select.select([pidfd], [], [], seconds)[0]:
                break
        os.waitpid(pid, 0)
    finally:
        os.close(pidfd)


def imported_packages(app: Sphinx, docname: str) -> list[str] | None:
    """The packages (top-level names) the page's code imported when it last executed, as its
    record says; None where no record says (execution not in ``cache`` mode, no record, or a
    kernel without the probe)."""
    build = _BUILD
    record = build.store.read(docname) if build is not None else None
    if record is None or record.get("untracked"):
        return None
    return record.get("imported")


# --- Sphinx events -------------------------------------------------------------------------------


def _configure(app: Sphinx, config) -> None:
    app.ffnbook_render_hash = rendering_hash()
    if config.nb_execution_mode == "cache":
        config.nb_execution_cache_path = str(Path(app.outdir).parent / STORE)


def _quiet_kernels(app: Sphinx, config) -> None:
    """Point kernels at an IPython profile that logs errors only (unless the user set one)."""
    if "IPYTHONDIR" in os.environ:
        return
    profile = Path(app.outdir).parent / ".ipython" / "profile_default"
    profile.mkdir(parents=True, exist_ok=True)
    (profile / "ipython_kernel_config.py").write_text('c.IPKernelApp.log_level = "ERROR"\n')
    os.environ["IPYTHONDIR"] = str(profile.parent)


def _start_build(app: Sphinx) -> None:
    global _BUILD
    if app.config.nb_execution_mode != "cache":
        _BUILD = None
        return
    build_folder = Path(app.outdir).parent.resolve()
    shutil.rmtree(build_folder / ".jupyter_cache", ignore_errors=True)  # the store this one replaced
    store = RecordStore(build_folder / STORE, discarded=_report_discarded)
    store.folder.mkdir(parents=True, exist_ok=True)
    store.remove_leftovers()
    remove_abandoned_folders()  # of builds killed with their kernel template
    roots = sorted({str(Path(app.confdir).resolve()), str(Path(app.srcdir).resolve())})
    excluded = sorted({str(build_folder), os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)})
    _BUILD = Build(
        store,
        Path(app.srcdir).resolve(),
        roots,
        excluded,
        Path(app.confdir).resolve() / "requirements.txt",
        kernel_threads(),
    )


def _report_discarded(docname: str, path: Path, why: str) -> None:
    # A log line, not a Sphinx warning: the build heals (the page executes again), and a
    # warning would fail a -W build that publishes only correct pages.
    logger.info(
        "ffnbook: discarded the execution record of %s (%s): %s; the page executes again",
        docname,
        shown_path(str(path)),
        why,
    )


def _outdated(app: Sphinx, env, added, changed, removed) -> list[str]:
    previous = getattr(env, "ffnbook_render_hash", None)
    current = getattr(app, "ffnbook_render_hash", None)
    env.ffnbook_render_hash = current
    if previous is not None and previous != current:
        logger.info("ffnbook: extensions, static files or glossary changed; re-reading every page")
        return sorted(env.found_docs - set(added) - set(changed) - set(removed))
    build = _BUILD
    notebooks: set[str] = getattr(env, "ffnbook_notebooks", set())
    if build is None:
        return []
    for docname in removed:
        notebooks.discard(docname)
        build.store.remove(docname)
    checker = Checker(build.requirements, build.threads)
    shown = _shown_records(env)
    again = []
    for docname in sorted(notebooks - set(added) - set(changed)):
        if docname not in env.found_docs:
            continue
        record = build.store.read(docname)
        # A stale record executes; a fresh one that is not the one the page was read from
        # (another build, `make pdf` say, executed the page since) is shown.
        if checker.stale(record) is not None or shown.get(docname) != record_stamp(record):
            again.append(docname)
    return again


def _shown_records(env) -> dict[str, str]:
    """docname -> stamp of the record each page was last read from."""
    if not hasattr(env, "ffnbook_shown"):
        env.ffnbook_shown = {}
    return env.ffnbook_shown


def _note_shown(app: Sphinx, doctree) -> None:
    docname = app.env.docname
    if docname in _SHOWN:
        _shown_records(app.env)[docname] = _SHOWN.pop(docname)


def _forget_shown(app: Sphinx, env, docname: str) -> None:
    _shown_records(env).pop(docname, None)


def _merge_shown(app: Sphinx, env, docnames, other) -> None:
    theirs = _shown_records(other)
    _shown_records(env).update({d: theirs[d] for d in docnames if d in theirs})


def setup(app: Sphinx) -> dict:
    # How pages execute, not what they show: changing these re-reads nothing.
    app.add_config_value("ffnbook_execution_jobs", 0, "", types=[int])
    app.add_config_value("ffnbook_kernel_preload", [], "", types=[list, tuple])
    serve_cache_mode_from_records(Engine(lambda: _BUILD, _execute_now, _SHOWN.__setitem__))
    app.connect("config-inited", _configure)
    app.connect("config-inited", _quiet_kernels)
    # After myst-nb's own builder-inited handler (priority 500) has made its configuration.
    app.connect("builder-inited", _start_build, priority=900)
    app.connect("env-get-outdated", _outdated)
    app.connect("env-before-read-docs", _execute_outdated_notebooks)
    app.connect("doctree-read", _note_shown)
    app.connect("env-purge-doc", _forget_shown)
    app.connect("env-merge-info", _merge_shown)
    app.connect("env-updated", _join_executor)
    app.connect("build-finished", _stop_executor)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
