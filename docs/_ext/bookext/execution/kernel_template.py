"""Kernel processes of the build: a warm template that forks one fresh kernel per page,
and the probe that records, inside each kernel, which project files and packages the page used.

This file runs as a script, never inside Sphinx (:mod:`bookext.execution.kernels` starts it), and
imports only the standard library at the top, so that a kernel holds nothing of the build.

``python kernel_template.py serve SOCKET OWNER_PID MODULE,MODULE,...``
    The template: imports the given modules (NumPy, Matplotlib, torch, ipykernel ...),
    then listens on the Unix socket SOCKET. Each ``fork`` request forks a child that
    becomes an IPython kernel exactly as ``python -m ipykernel_launcher ARGS`` would:
    its own process, session, working directory, environment and an empty namespace;
    only the already imported modules are shared (copy-on-write). It never imports
    ffnbook or any project code, so nothing a page computes can come from an old copy.
    The template exits when OWNER_PID (the Sphinx process) is gone or on ``quit``.

``python kernel_template.py kernel ARGS``
    One ordinary kernel (no template), with the probe: the fallback when forking is
    not possible.

Protocol, one JSON object per line on the socket:
``{"op": "fork", "argv": [...], "cwd": "...", "env": {...}}`` is answered with
``{"pid": N}`` and the child's pidfd (so the caller can wait for and signal exactly
that process), or ``{"error": "..."}`` when the kernel cannot be forked (then the
caller starts an ordinary kernel). ``{"op": "quit"}`` stops the template.
"""

from __future__ import annotations

import builtins
import json
import os
import select
import shutil
import signal
import socket
import sys
import tempfile
import traceback
import types
from pathlib import Path

#: The name under which a kernel's probe is reachable: ``sys.modules[PROBE_MODULE]``.
PROBE_MODULE = "bookext_probe"
#: The probe's name for the page's own cells as the importer of a package.
PAGE = "<page>"
#: Where the import system's own code runs from: it opens and lists files to find modules,
#: which the probe learns from ``sys.modules`` instead.
IMPORT_SYSTEM = ("<frozen importlib._bootstrap_external>", "<frozen zipimport>")
#: Environment variables that may differ between the template and a kernel: set per kernel by
#: jupyter_client, or terminal sizes (read when used, never at import; test runners set them).
PER_KERNEL_ENV = ("JPY_", "PYDEVD_", "COLUMNS", "LINES")
#: bookext's folder (the build's own code), never a page's dependency.
BOOKEXT_FOLDER = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: The Matplotlib backend ipykernel selects; Matplotlib reads it once, at import.
DEFAULT_BACKEND = "module://matplotlib_inline.backend_inline"
#: The thread pools a kernel's NumPy and torch size from the environment when they load:
#: OpenMP (torch's intra-op pool, OpenMP builds of BLAS), OpenBLAS and MKL.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def kernel_threads() -> dict[str, str]:
    """The thread settings of every page's kernel: one thread each, unless the builder set them.

    One thread, because (1) each library otherwise starts a thread per CPU in every one of
    the ``-j`` kernels running at once, and the spinning threads slow one another by orders
    of magnitude on a loaded machine (``np.linalg.pinv`` of a 1024 x 128 matrix on 2 busy
    CPUs: 10.5 s with a thread per CPU, 0.09 s with one); (2) a sum split over threads
    rounds differently, so the last digits a page shows (its rounding-gap demonstrations)
    would depend on the CPUs of the machine that built it. The settings are part of each
    page's execution record: a page computed with other settings executes again.
    """
    return {name: os.environ.get(name) or "1" for name in THREAD_VARIABLES}


# --- the probe: what a page used ------------------------------------------------------------


def _caller_file() -> str:
    """The file of the Python code that raised the audit event (the hook is frame 1 below it)."""
    try:
        return sys._getframe(2).f_code.co_filename
    except ValueError:  # raised from C code with no Python caller
        return ""


def _page_namespace() -> dict | None:
    """The IPython shell's user namespace (the page's globals); None before the shell exists.
    Read without calling IPython (whose ``get_ipython`` imports, which would come back here)."""
    shell_class = getattr(sys.modules.get("IPython.core.interactiveshell"), "InteractiveShell", None)
    shell = getattr(shell_class, "_instance", None)
    return None if shell is None else shell.user_global_ns


def _importer(page: dict | None) -> str | None:
    """Who runs the import statement being executed: ``PAGE`` (a cell, or a function it
    defined), the file of the code that does (when the page called it, at any depth), or
    None (the kernel's own code, not working for the page)."""
    if page is None:
        return None
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
        frame = frame.f_back  # the import system importing a submodule (from x import y)
    if frame is None:
        return None
    importer = PAGE if frame.f_globals is page else frame.f_code.co_filename
    while frame is not None:
        if frame.f_globals is page:
            return importer
        frame = frame.f_back
    return None


def install_probe() -> types.ModuleType:
    """Record, from now on, every file opened and every folder listed, through an audit hook,
    and every package the page's code imports, through ``builtins.__import__``.

    The probe adds no name to the kernel's namespace: it is reachable only as
    ``sys.modules[PROBE_MODULE]``, whose ``report(roots, excluded)`` returns the JSON text
    of the files inside ``roots`` (and not inside ``excluded``) that the page imported,
    read, wrote and listed, and of the packages (top-level names, outside the standard
    library) that the page's cells imported, or project code they called.

    Packages are seen at the import statement, not at loading: a kernel forked from the
    template has torch loaded before the page starts, so ``sys.modules`` cannot tell
    whether the page used it; ``import torch`` runs the statement either way.
    """
    read: set[str] = set()
    written: set[str] = set()
    listed: set[str] = set()
    imported: dict[str, set[str]] = {}  # top-level package -> who imported it (PAGE or a file)

    def report(roots: list[str], excluded: list[str]) -> str:
        inside_roots = tuple(os.path.join(os.path.realpath(r), "") for r in roots)
        outside = tuple(os.path.join(os.path.realpath(e), "") for e in [*excluded, BOOKEXT_FOLDER])

        # Import locations (sys.path entries) are opened and listed by the import machinery
        # and by importlib.metadata; what a page imports is known from sys.modules instead.
        import_locations = {os.path.realpath(p or ".") for p in sys.path}

        def inside(paths) -> list[str]:
            real = {os.path.realpath(p) for p in paths} - import_locations
            return sorted(
                p
                for p in real
                if p.startswith(inside_roots) and not p.startswith(outside) and "__pycache__" not in p.split(os.sep)
            )

        modules = [
            m.__file__
            for m in list(sys.modules.values())
            if isinstance(getattr(m, "__file__", None), str) and os.path.isabs(m.__file__)
        ]
        # Imported by the page's cells or by project code they called; not what a library
        # imports for itself (torch loading its optional parts), nor the standard library.
        packages = sorted(
            name
            for name, importers in imported.items()
            if name not in sys.stdlib_module_names
            and not name.startswith("_")
            and (PAGE in importers or inside(i for i in importers if os.path.isabs(i)))
        )
        return json.dumps(
            {
                "modules": inside(modules),
                "read": inside(read),
                "written": inside(written),
                "listed": inside(listed),
                "imported": packages,
            }
        )

    probe = types.ModuleType(PROBE_MODULE, "What this kernel's page imported, read and listed.")
    probe.report = report
    sys.modules[PROBE_MODULE] = probe
    sys.addaudithook(_file_hook(read, written, listed))
    builtins.__import__ = _recording_import(imported, builtins.__import__)
    return probe


def _recording_import(imported: dict[str, set[str]], plain_import):
    """``builtins.__import__`` that notes, for each package the page imports, who imported it."""

    def recording_import(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and name:
            importer = _importer(_page_namespace())
            if importer is not None:
                imported.setdefault(name.partition(".")[0], set()).add(importer)
        return plain_import(name, globals, locals, fromlist, level)

    return recording_import


def _file_hook(read: set[str], written: set[str], listed: set[str]):
    """An audit hook that notes every file opened (for reading, writing) and folder listed."""

    def hook(event: str, args: tuple) -> None:
        if event not in ("open", "os.listdir", "os.scandir"):
            return
        path = args[0]
        if path is None and event != "open":
            path = "."
        if path is None or isinstance(path, int) or _caller_file() in IMPORT_SYSTEM:
            return  # an already open file descriptor, or the import system at work
        path = os.path.abspath(os.fsdecode(path))
        if event == "open":
            _, mode, flags = args
            if mode is None:  # os.open: only flags
                access = (flags or 0) & os.O_ACCMODE
                reads, writes = access != os.O_WRONLY, access != os.O_RDONLY
            else:
                reads = "r" in mode or "+" in mode
                writes = any(c in mode for c in "wax+")
            if reads:
                read.add(path)
            if writes:
                written.add(path)
        else:
            listed.add(path)

    return hook


def _launcher_argv0() -> str:
    import importlib.util

    spec = importlib.util.find_spec("ipykernel_launcher")
    return spec.origin if spec and spec.origin else "ipykernel_launcher"


def run_kernel(argv: list[str]) -> None:
    """Become an IPython kernel with ``argv`` (``-f CONNECTION_FILE ...``), the probe installed."""
    install_probe()
    sys.argv = [_launcher_argv0(), *argv]
    from ipykernel import kernelapp

    kernelapp.launch_new_instance()


# --- the template -------------------------------------------------------------------------


def _env_differences(base: dict, env: dict) -> list[str]:
    keys = {k for k in base.keys() | env.keys() if not k.startswith(PER_KERNEL_ENV)}
    return sorted(k for k in keys if base.get(k) != env.get(k))


def _become_kernel(request: dict, closing: list[socket.socket]) -> None:
    """In the forked child: look like a kernel process started from scratch, then run it."""
    code = 1
    try:
        for sock in closing:
            sock.close()
        os.setsid()  # its own process group, as jupyter_client's launcher gives a kernel
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        # A fresh process draws new random seeds at import; forked children would share one.
        import random

        random.seed()
        if "numpy.random" in sys.modules:
            sys.modules["numpy.random"].seed()
        # The kernel exits when its parent does: this template, which exits with Sphinx. (ipykernel
        # read JPY_PARENT_PID when the template imported it, so it is given as an option.)
        run_kernel([*request["argv"], f"--IPKernelApp.parent_handle={os.getppid()}"])
        code = 0
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 0
    except BaseException:  # noqa: BLE001 - a child must never return into the template's loop
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def process_exists(pid: int) -> bool:
    """Whether process ``pid`` is running. A killed build's process whose parent was
    killed too stays a zombie until init reaps it: it holds its pid but runs nothing, and
    a build starting at once must count it as gone, or it keeps its kernel folder."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # the state follows the command's name in parentheses (Linux; elsewhere: running)
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"


#: The template's socket lives in ``<tmp>/bookext-kernels-<pid of the build process>-<random>``
#: (short: socket paths are limited). The template removes the folder when it ends, the
#: build process too; a folder whose build process is gone (both were killed) is removed
#: when the next build starts.
KERNELS_FOLDER = "bookext-kernels-"


def remove_abandoned_folders(tmp: str | None = None) -> None:
    """Remove the kernel folders of build processes that no longer exist."""
    for folder in Path(tmp or tempfile.gettempdir()).glob(KERNELS_FOLDER + "*"):
        owner, _, rest = folder.name[len(KERNELS_FOLDER) :].partition("-")
        try:
            if folder.stat().st_uid == os.getuid() and owner.isdigit() and rest and not process_exists(int(owner)):
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            pass


def _answer(conn: socket.socket, listener: socket.socket, base_env: dict) -> bool:
    """Serve one request; False when the template should stop."""
    with conn.makefile("rb") as stream:
        line = stream.readline()
    request = json.loads(line or b"{}")
    op = request.get("op")
    if op == "quit":
        return False
    if op != "fork":
        conn.sendall(json.dumps({"error": f"unknown request {op!r}"}).encode() + b"\n")
        return True
    differ = _env_differences(base_env, request.get("env", {}))
    if differ:
        # Variables read at import time (PYTHONPATH, MPLBACKEND ...) would not apply.
        conn.sendall(json.dumps({"error": f"environment differs: {', '.join(differ)}"}).encode() + b"\n")
        return True
    pid = os.fork()
    if pid == 0:
        _become_kernel(request, [conn, listener])
    # Opened before this loop can reap the child, so the descriptor is that child's.
    pidfd = os.pidfd_open(pid)
    try:
        socket.send_fds(conn, [json.dumps({"pid": pid}).encode() + b"\n"], [pidfd])
    finally:
        os.close(pidfd)
    return True


def serve(path: str, owner: int, modules: list[str]) -> None:
    base_env = dict(os.environ)
    os.environ.setdefault("MPLBACKEND", DEFAULT_BACKEND)  # what ipykernel sets, before Matplotlib reads it
    import importlib

    for name in ["ipykernel.kernelapp", *modules]:
        try:
            importlib.import_module(name)
        except Exception as error:  # noqa: BLE001 - a kernel will import it itself (and fail there)
            print(f"kernel template: could not import {name}: {error}", file=sys.stderr)
    os.environ.clear()
    os.environ.update(base_env)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)  # the socket appears only now: connecting to it means "ready"
    listener.listen(16)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops Sphinx, whose exit stops this loop
    try:
        while process_exists(owner):
            _reap()
            ready, _, _ = select.select([listener], [], [], 0.5)
            if not ready:
                continue
            conn, _ = listener.accept()
            with conn:
                if not _answer(conn, listener, base_env):
                    break
    finally:
        listener.close()
        # The socket and its folder: the build that made them may be gone (killed) and
        # cannot remove them itself.
        for remove in (os.unlink, os.rmdir):
            try:
                remove(path)
            except OSError:
                pass
            path = os.path.dirname(path)


def main(argv: list[str]) -> None:
    # Like ipykernel_launcher, which removes the working directory from sys.path: here the
    # script's folder (bookext) goes, so no build module can shadow what a page imports.
    del sys.path[0]
    if argv[:1] == ["serve"] and len(argv) == 4:
        serve(argv[1], int(argv[2]), [m for m in argv[3].split(",") if m])
    elif argv[:1] == ["kernel"]:
        run_kernel(argv[1:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
