"""Running the book's notebooks: a fresh kernel per page, forked from a warm template, several at a time.

A kernel started the ordinary way (``python -m ipykernel_launcher``) pays Python's start-up
and the imports of ipykernel, NumPy, Matplotlib and, on most pages, torch again, about two
to three seconds of CPU per page. :class:`KernelPool` starts one template process per build
that imports those modules once (``kernel_template.py serve``); every page's kernel is a
child forked from it, through jupyter_client's kernel provisioner API
(:class:`ForkProvisioner`). Each page still gets its own process, session, working
directory, environment and empty namespace; the template never imports project code.

Every kernel, forked or not, gets the thread settings of
:func:`bookext.execution.kernel_template.kernel_threads` in its environment (one BLAS/OpenMP thread).

When a kernel cannot be forked (no template, another Python, a different environment,
no ``os.pidfd_open``) it is started the ordinary way, through ``kernel_template.py kernel``
so that the probe is installed either way.

:func:`execute_notebooks` runs notebooks concurrently (longest expected first) and returns,
for each, the executed notebook and what the probe saw: the project's modules it
imported, the files it read and wrote, the folders it listed.

Priorities: the page expected to take longest runs at the build's own CPU priority and every
other page's kernel at :data:`BACKGROUND_NICENESS` lower (``nice``). On two cores a clean
build ran its longest page (32 s alone) beside another kernel and Sphinx reading, three
processes on two CPUs, and waited 47 s for it while the short pages, which had time to
spare, got an equal share; lowered, they take the CPU the long page leaves (a clean
`make html`, three interleaved runs each on an idle machine: 60.7 s before, 55.5 s after,
medians). A page's numbers do not depend on its priority, only its timings do.

Stopping: SIGINT (Ctrl-C), SIGTERM, or the end of the process that asked for the
execution stops it at once (:class:`StopOnSignal`): no page is reported, failed or
succeeded, that the stop cut short; every kernel is killed, the template closed and its
folder removed; then the signal takes its ordinary course. nbclient's own signal handlers
are refused (:class:`ExecutorLoop`): each client installs one that shuts down a single
kernel (whichever started last), leaving the other pages running.
"""

from __future__ import annotations

import ast
import asyncio
import atexit
import contextvars
import copy
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty

import nbformat
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from jupyter_client.provisioning import LocalProvisioner
from nbclient import NotebookClient
from traitlets import Type

from .kernel_template import KERNELS_FOLDER, PROBE_MODULE

TEMPLATE = Path(__file__).with_name("kernel_template.py")
#: How long the template may take to import its modules before kernels start the ordinary way.
TEMPLATE_STARTUP_SECONDS = 120
FORKING = hasattr(os, "pidfd_open") and hasattr(socket, "recv_fds")
#: How much lower (``nice``) a kernel runs than the build when its page is not the longest expected.
BACKGROUND_NICENESS = 10
#: The niceness the kernel being launched gets, set per page by :func:`execute_notebooks`.
_launch_niceness: contextvars.ContextVar[int] = contextvars.ContextVar("launch_niceness", default=0)


class KernelPool:
    """One template process that has imported ``modules`` and forks a kernel per request."""

    def __init__(self, modules: list[str], env: dict[str, str] | None = None) -> None:
        self.folder = tempfile.mkdtemp(prefix=f"{KERNELS_FOLDER}{os.getpid()}-")
        self.address = os.path.join(self.folder, "template")
        self.unavailable: str | None = None
        # ``env`` is added to every kernel's environment (ForkProvisioner): the template
        # imports its modules with it too, and forks only kernels whose environment is its own.
        self.process = subprocess.Popen(
            [sys.executable, str(TEMPLATE), "serve", self.address, str(os.getpid()), ",".join(modules)],
            stdin=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
        )
        self.started = time.monotonic()

    async def _connect(self) -> socket.socket | None:
        while True:
            if self.process.poll() is not None:
                self.unavailable = f"the kernel template exited with status {self.process.returncode}"
                return None
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(self.address)
                return sock
            except (FileNotFoundError, ConnectionRefusedError):
                sock.close()
            if time.monotonic() - self.started > TEMPLATE_STARTUP_SECONDS:
                self.unavailable = "the kernel template did not start in time"
                return None
            await asyncio.sleep(0.05)  # still importing; the socket appears when it is ready

    async def fork(self, argv: list[str], cwd: str, env: dict) -> tuple[int, int] | None:
        """A forked kernel's ``(pid, pidfd)``, or None: then start the kernel the ordinary way."""
        if self.unavailable:
            return None
        sock = await self._connect()
        if sock is None:
            return None
        with sock:
            request = {"op": "fork", "argv": argv, "cwd": cwd, "env": env}
            sock.sendall(json.dumps(request).encode() + b"\n")
            message, fds, _, _ = socket.recv_fds(sock, 1 << 16, 1)
        reply = json.loads(message or b"{}")
        if "pid" not in reply or not fds:
            for fd in fds:
                os.close(fd)
            self.unavailable = reply.get("error", "no answer from the kernel template")
            return None
        return reply["pid"], fds[0]

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                    sock.connect(self.address)
                    sock.sendall(b'{"op": "quit"}\n')
                self.process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.process.terminate()
                self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


class ForkedKernel:
    """The part of :class:`subprocess.Popen` a provisioner uses, for a process forked by the template.

    The process is not our child, so it is followed through a pidfd: signals reach
    exactly that process, never another one that reused its number.
    """

    stdin = stdout = stderr = None

    def __init__(self, pid: int, pidfd: int) -> None:
        self.pid = pid
        self.pidfd = pidfd
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None and select.select([self.pidfd], [], [], 0)[0]:
            self.returncode = 0  # its exit status goes to the template, which reaps it
            os.close(self.pidfd)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(str(self.pid), timeout)
            time.sleep(0.02)
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            signal.pidfd_send_signal(self.pidfd, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _is_ipykernel(cmd: list[str]) -> bool:
    return cmd[1:3] == ["-m", "ipykernel_launcher"]


class ForkProvisioner(LocalProvisioner):
    """Launches an IPython kernel by forking the template; any other way, as LocalProvisioner does."""

    pool: KernelPool | None = None
    extra_env: dict[str, str] = {}
    launched: list[ForkProvisioner] | None = None  # every kernel this execution started (StopOnSignal)
    forked = False

    def _finalize_env(self, env: dict[str, str]) -> None:
        super()._finalize_env(env)
        env.update(self.extra_env)

    async def launch_kernel(self, cmd: list[str], **kwargs):
        forked = None
        if self.pool is not None and _is_ipykernel(cmd) and cmd[0] == sys.executable:
            cwd = str(kwargs.get("cwd") or os.getcwd())
            forked = await self.pool.fork(cmd[3:], cwd, dict(kwargs.get("env") or os.environ))
        if forked is None:
            if _is_ipykernel(cmd):  # the same kernel, with the probe installed first
                cmd = [cmd[0], str(TEMPLATE), "kernel", *cmd[3:]]
            info = await super().launch_kernel(cmd, **kwargs)
            self._note_launched()
            return info
        self.pid, pidfd = forked
        self.forked = True
        self.process = ForkedKernel(self.pid, pidfd)
        self.pgid = self.pid  # the child called setsid()
        self.cwd = kwargs.get("cwd", Path.cwd())
        self._note_launched()
        return self.connection_info

    def _note_launched(self) -> None:
        if self.launched is not None:
            self.launched.append(self)
        niceness = _launch_niceness.get()
        if niceness and self.pid and hasattr(os, "setpriority"):
            try:  # before its first cell: the kernel is still starting
                os.setpriority(os.PRIO_PROCESS, self.pid, os.getpriority(os.PRIO_PROCESS, self.pid) + niceness)
            except OSError:  # gone already: its start fails on its own
                pass

    def kill_now(self) -> None:
        """Kill the kernel and its process group at once, from outside any coroutine."""
        process = self.process
        if process is None or process.poll() is not None:
            return  # gone (and reaped): its group number may belong to someone else now
        try:
            os.killpg(self.pgid, signal.SIGKILL)  # the kernel and whatever the page started
        except (OSError, TypeError):
            try:
                process.kill()
            except OSError:
                pass  # it ended meanwhile

    async def send_signal(self, signum: int) -> None:
        if isinstance(self.process, ForkedKernel) and self.process.poll() is not None:
            return  # gone: its process group number may belong to someone else now
        await super().send_signal(signum)


class KernelDiedAtStart(RuntimeError):
    """The kernel exited before it answered its first request: no cell of the page ran."""


class PromptlyReadyClient(AsyncKernelClient):
    """A kernel client that starts a page as soon as its kernel is ready.

    jupyter_client's ``wait_for_ready`` ends by reading IOPub until nothing has arrived
    for 0.2 s, which every page paid (measured: a one-line page took 0.58 s in a forked
    kernel). Here the kernel is ready once it has answered a ``kernel_info`` request on
    the shell channel and the "idle" status of that request has come through IOPub: that
    proves IOPub is connected and leaves none of the request's messages unread. If IOPub
    was not connected yet (ZeroMQ's slow joiner), the request is sent again.
    """

    async def wait_for_ready(self, timeout: float | None = None) -> None:
        deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
        while True:
            if await self._answered(self.kernel_info(), deadline):
                return
            if not await self._async_is_alive():
                raise KernelDiedAtStart("Kernel died before replying to kernel_info")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout:.0f} seconds")

    async def _answered(self, request: str, deadline: float) -> bool:
        def answers(message) -> bool:
            return message["parent_header"].get("msg_id") == request

        reply = await _first(
            self.shell_channel, deadline, lambda m: answers(m) and m["msg_type"] == "kernel_info_reply"
        )
        if reply is None:
            return False
        # As jupyter_client does, IOPub gets 0.2 s: its messages are sent with the reply.
        idle = await _first(
            self.iopub_channel,
            deadline,
            lambda m: answers(m) and m["msg_type"] == "status" and m["content"].get("execution_state") == "idle",
            patience=0.2,
        )
        if idle is None:
            return False
        self._handle_kernel_info_reply(reply)
        return True


async def _first(channel, deadline: float, wanted, patience: float = 1.0):
    """The first message on ``channel`` that is ``wanted`` within ``patience`` seconds, else None."""
    until = min(deadline, time.monotonic() + patience)
    while (left := until - time.monotonic()) > 0:
        try:
            message = await channel.get_msg(timeout=left)
        except Empty:
            return None
        if wanted(message):
            return message
    return None


def manager_class(
    pool: KernelPool | None, env: dict[str, str] | None = None, launched: list | None = None
) -> type[AsyncKernelManager]:
    """An AsyncKernelManager whose kernels come from ``pool`` (or start the ordinary way), ``env``
    added; each kernel's provisioner is appended to ``launched``."""
    provisioner_class = type(
        "BoundForkProvisioner",
        (ForkProvisioner,),
        {"pool": pool, "extra_env": dict(env or {}), "launched": launched},
    )

    class Manager(AsyncKernelManager):
        client_factory = Type(PromptlyReadyClient, klass=AsyncKernelClient)

        async def _async_finish_shutdown(self, waittime=None, pollinterval=0.1, restart=False):
            # A kernel exits within milliseconds of its shutdown reply; jupyter_client's
            # first look after 0.1 s cost every page 0.1 s.
            await super()._async_finish_shutdown(waittime, min(pollinterval, 0.01), restart)

        async def _async_pre_start_kernel(self, **kw):
            if self.provisioner is None:
                self.kernel_id = self.kernel_id or str(uuid.uuid4())
                self.provisioner = provisioner_class(
                    kernel_id=self.kernel_id, kernel_spec=self.kernel_spec, parent=self
                )
            return await super()._async_pre_start_kernel(**kw)

    return Manager


# --- executing notebooks ---------------------------------------------------------------------


@dataclass
class Run:
    """One notebook to execute."""

    key: str
    notebook: nbformat.NotebookNode
    cwd: str
    timeout: int | None
    allow_errors: bool
    expected_seconds: float = 0.0


@dataclass
class Outcome:
    """An executed notebook (outputs filled in) and what its kernel used."""

    notebook: nbformat.NotebookNode
    started: float  # time.time() when execution began
    seconds: float
    used: dict | None = None  # the probe's report; None when the kernel had no probe
    error: str | None = None  # exception class name when execution failed
    traceback: str | None = None
    forked: bool = field(default=False)
    exception: BaseException | None = field(default=None, repr=False)  # the failure itself


def _probe_cell(roots: list[str], excluded: list[str]) -> nbformat.NotebookNode:
    # An expression, so the report comes back as one execute_result, and no name is bound.
    source = (
        f"(lambda probe: probe.report({roots!r}, {excluded!r}) if probe else None)"
        f"(__import__('sys').modules.get({PROBE_MODULE!r}))"
    )
    return nbformat.v4.new_code_cell(source)


def _report(cell: nbformat.NotebookNode) -> dict | None:
    for output in cell.get("outputs", []):
        text = output.get("data", {}).get("text/plain") if output.get("output_type") == "execute_result" else None
        if text:
            try:
                return json.loads(ast.literal_eval(text))
            except (ValueError, SyntaxError):
                return None
    return None


async def _execute(run: Run, places: tuple, manager: type, limit: asyncio.Semaphore) -> Outcome:
    outcome = await _execute_once(run, places, manager, limit)
    # A kernel started the ordinary way binds ports jupyter_client picked and released a moment
    # before, which another process can take meanwhile (jupyter/jupyter_client#154): the kernel
    # exits before its first reply (seen once in a fresh clone's make test, with the other test
    # worker busy). No cell of the page ran, so the page starts once more, with new ports. A stop
    # (StopOnSignal) cancels this task instead, so a stopped build starts nothing again.
    if isinstance(outcome.exception, KernelDiedAtStart):
        outcome = await _execute_once(run, places, manager, limit)
    return outcome


async def _execute_once(run: Run, places: tuple, manager: type, limit: asyncio.Semaphore) -> Outcome:
    async with limit:
        notebook = copy.deepcopy(run.notebook)
        timeout, allow_errors = run.timeout, run.allow_errors
        overrides = notebook.metadata.get("execution", {})  # as jupyter-cache lets a notebook say
        timeout = overrides.get("timeout", timeout)
        allow_errors = overrides.get("allow_errors", allow_errors)
        notebook.cells.append(_probe_cell(*places))
        provisioners = []  # the kernel's, kept: the manager forgets it at shutdown
        client = NotebookClient(
            notebook,
            timeout=timeout,
            allow_errors=allow_errors,
            kernel_manager_class=manager,
            resources={"metadata": {"path": run.cwd}},
            on_notebook_start=lambda **_: provisioners.append(client.km.provisioner),
        )
        started, clock = time.time(), time.perf_counter()
        error = trace = failure = None
        try:
            await client.async_execute()
        except Exception as exc:  # noqa: BLE001 - any failure is reported against the page
            error, trace, failure = type(exc).__name__, traceback.format_exc(), exc
        finally:
            # nbclient registers a kernel clean-up to run at exit and leaves it registered when
            # the kernel fails to start, though it has cleaned that kernel up itself (its
            # manager gone): at exit the clean-up then fails, printing "Exception ignored in
            # atexit callback ... assert self.km is not None". A kernel it still holds keeps it.
            if client.km is None:
                atexit.unregister(client._cleanup_kernel)
        seconds = time.perf_counter() - clock
        probe = notebook.cells.pop()
        return Outcome(
            notebook,
            started,
            seconds,
            None if error else _report(probe),
            error,
            trace,
            forked=any(getattr(p, "forked", False) for p in provisioners),
            exception=failure,
        )


# --- stopping --------------------------------------------------------------------------------


class ExecutorLoop(asyncio.SelectorEventLoop):
    """The event loop notebooks execute on, which takes no signal handler.

    nbclient's ``NotebookClient.async_setup_kernel`` installs a SIGINT and a SIGTERM handler
    per client that shuts down that client's kernel. With several pages on one loop, each
    client replaces the last one's handler and the first to finish removes the handler of
    whichever is still running: a signal shuts down one arbitrary kernel in the middle of
    its page (reported as that page's failure) and leaves the other pages running. nbclient
    takes a RuntimeError from ``add_signal_handler`` for "not the main thread" and goes on
    without (tests/test_upstream_contracts.py checks that it still does);
    :class:`StopOnSignal` handles both signals for every kernel at once.
    """

    def add_signal_handler(self, sig, callback, *args):
        raise RuntimeError(
            "the notebook executor handles SIGINT and SIGTERM itself (bookext.execution.kernels.StopOnSignal)"
        )


class ExecutionStopped(Exception):
    """Execution was stopped by a signal whose handler did not end the process."""


class StopOnSignal:
    """While notebooks execute on ``loop``: SIGINT or SIGTERM (or the end of process ``owner``,
    taken as SIGTERM) cancels every page, running or waiting, and kills every kernel in
    ``launched`` with its process group at once. A page cut short is reported as nothing,
    neither failed nor executed: the build stopped, not the page.

    Signals ignored by whoever started the build (``nohup``) stay ignored. :meth:`deliver`,
    once the kernels are gone and the template closed, puts the previous handlers back and
    delivers the signal again, as if it had arrived then: Ctrl-C raises KeyboardInterrupt,
    SIGTERM ends the process.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, loop: asyncio.AbstractEventLoop, launched: list, owner: int | None = None) -> None:
        self.loop = loop
        self.launched = launched
        self.signum: int | None = None
        self.previous: dict[int, object] = {}
        self.owner_fd: int | None = None
        if threading.current_thread() is threading.main_thread():
            for signum in self.SIGNALS:
                if signal.getsignal(signum) not in (signal.SIG_IGN, None):
                    self.previous[signum] = signal.signal(signum, self._on_signal)
        if owner is not None and hasattr(os, "pidfd_open"):
            try:
                self.owner_fd = os.pidfd_open(owner)
            except ProcessLookupError:
                self._on_signal(signal.SIGTERM, None)
            else:  # readable once the owner has ended
                loop.add_reader(self.owner_fd, self._owner_ended)

    @property
    def stopped(self) -> bool:
        return self.signum is not None

    def _on_signal(self, signum: int, _frame) -> None:
        if self.signum is not None:
            return  # stopping already
        self.signum = signum
        try:
            self.loop.call_soon_threadsafe(self._stop)
        except RuntimeError:  # the loop is closed: the caller kills what is left
            pass

    def _owner_ended(self) -> None:
        self.loop.remove_reader(self.owner_fd)  # it stays readable
        self._on_signal(signal.SIGTERM, None)

    def _stop(self) -> None:
        self.kill_kernels()
        for task in asyncio.all_tasks(self.loop):
            task.cancel()

    def kill_kernels(self) -> None:
        for provisioner in self.launched:
            provisioner.kill_now()

    def deliver(self) -> None:
        """Restore the previous handlers; deliver the signal that stopped execution, if one did."""
        if self.owner_fd is not None:
            if not self.loop.is_closed():
                self.loop.remove_reader(self.owner_fd)
            os.close(self.owner_fd)
            self.owner_fd = None
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)
        self.previous = {}
        if self.signum is None:
            return
        sys.stdout.flush()
        sys.stderr.flush()
        if signal.getsignal(self.signum) not in (signal.SIG_IGN, None):
            signal.raise_signal(self.signum)
        raise ExecutionStopped(f"notebook execution stopped by {signal.Signals(self.signum).name}")


def _discard_connection_files(launched: list) -> None:
    """Connection files of kernels whose client never cleaned up (stopped while starting)."""
    for provisioner in launched:
        manager = getattr(provisioner, "parent", None)
        if manager is not None:
            try:
                manager.cleanup_connection_file()
            except OSError:
                pass


def execute_notebooks(
    runs: list[Run],
    *,
    jobs: int,
    roots: list[str],
    excluded: list[str],
    preload: list[str] | None,
    env: dict[str, str] | None = None,
    report=None,
    note=None,
    owner: int | None = None,
) -> dict[str, Outcome]:
    """Execute ``runs``, ``jobs`` at a time, longest expected first; ``report(run, outcome)`` as each ends.

    With ``preload`` (module names) kernels are forked from a template that imported them;
    ``note(reason)`` is called if kernels had to start from scratch instead. ``env`` is
    added to every kernel's environment (the thread settings).
    Each outcome's ``used`` lists the files inside ``roots``, not inside ``excluded``.
    SIGINT, SIGTERM or the end of process ``owner`` stops everything (:class:`StopOnSignal`).
    """
    launched: list[ForkProvisioner] = []
    runner = asyncio.Runner(loop_factory=ExecutorLoop)
    stop = StopOnSignal(runner.get_loop(), launched, owner)
    pool = None
    outcomes: dict[str, Outcome] = {}
    try:
        pool = KernelPool(preload, env) if preload and FORKING and runs and not stop.stopped else None
        manager = manager_class(pool, env, launched)

        async def main() -> dict[str, Outcome]:
            limit = asyncio.Semaphore(max(1, jobs))
            ordered = sorted(runs, key=lambda r: -r.expected_seconds)

            async def one(run: Run) -> tuple[str, Outcome]:
                # The page the build waits on longest keeps the build's priority (see the docstring).
                _launch_niceness.set(0 if run is ordered[0] else BACKGROUND_NICENESS)
                outcome = await _execute(run, (roots, excluded), manager, limit)
                if stop.stopped:  # cut short (its kernel killed): not the page's failure
                    raise asyncio.CancelledError
                if report is not None:
                    report(run, outcome)
                return run.key, outcome

            return dict(await asyncio.gather(*(one(run) for run in ordered)))

        outcomes = runner.run(main())
    except asyncio.CancelledError:
        if not stop.stopped:
            raise
    finally:
        try:
            stop.kill_kernels()  # any the stop found starting, or a client left behind
            runner.close()
            _discard_connection_files(launched)
        finally:
            try:
                if pool is not None:
                    pool.close()
                    if pool.unavailable and note is not None:
                        note(pool.unavailable)
            finally:
                stop.deliver()
    return outcomes
