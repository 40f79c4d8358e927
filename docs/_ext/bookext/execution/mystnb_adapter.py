"""The one place the execution engine plugs into myst-nb, and every myst-nb internal it uses.

myst-nb reads each page and asks a *client* for the notebook's outputs; in ``cache`` mode
that client is ``myst_nb.core.execute.NotebookClientCache`` (jupyter-cache). myst-nb has
no setting for a client of one's own: ``create_client`` looks that name up in its module
on each call, so :func:`serve_cache_mode_from_records` rebinds it to
:func:`recorded_client_class`'s client, which gives the page the outputs of its record
(:mod:`bookext.execution.records`) or has :mod:`bookext.execution.engine` execute it; the engine hands in
what the client needs of it (:class:`Engine`), so this module never imports the engine. Were
``create_client`` to take a client class (or a kernel manager) from the configuration,
that setting would replace the rebinding.

:func:`notebook_of` reads a page as myst-nb's parser will, before Sphinx reads it, so
that the stale pages can execute while the others are read.

The myst-nb internals used here (``NotebookClientBase`` and its attributes,
``create_client``/``NotebookClientCache``, ``create_nb_reader``, ``nb_node_to_dict``) are
checked by tests/test_upstream_contracts.py, which fails in seconds after an upgrade
that changes them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import nbformat
from sphinx.errors import ExtensionError
from sphinx.util import logging

from .records import Checker, code_hash, record_stamp

logger = logging.getLogger(__name__)


def outputs_into(notebook, record: dict) -> None:
    code_cells = [c for c in notebook.cells if c.cell_type == "code"]
    for cell, stored in zip(code_cells, record["cells"], strict=True):
        cell.execution_count = stored["execution_count"]
        cell.outputs = [nbformat.from_dict(output) for output in stored["outputs"]]
    for key, value in record["metadata"].items():
        notebook.metadata[key] = nbformat.from_dict(value)


# --- the myst-nb client for ``nb_execution_mode = "cache"`` ---------------------------------


@dataclass(frozen=True)
class Engine:
    """What the client needs of the execution engine, handed in by it (no import back)."""

    #: This build's state (:class:`bookext.execution.engine.Build`), None outside a prepared build.
    current_build: Callable[[], object | None]
    #: Execute one page now, while it is read: (build, docname, notebook, nb_config, path) -> outcome.
    execute_now: Callable[..., object]
    #: Note the stamp of the record a page being read shows: (docname, stamp).
    note_shown: Callable[[str, str], None]


def recorded_client_class(engine: Engine):
    from myst_nb.core.execute.base import ExecutionError, NotebookClientBase

    class RecordedNotebookClient(NotebookClientBase):
        """Outputs from the page's record; executes the page only if the record is stale."""

        def start_client(self) -> None:
            build = engine.current_build()
            if build is None or self.path is None:
                raise ExtensionError("bookext.execution.engine: a notebook is read outside a prepared build")
            docname = build.docname(self.path)
            code = code_hash(self.notebook, self.nb_config)
            result = build.result(docname, code)
            if result is None:  # not executed in this build (or edited since it was)
                record = build.usable_record(docname, self.notebook)
                reason = Checker(build.requirements, build.threads).stale(record, code)
                if reason is None:
                    return self._show(docname, record)
                logger.info("ffnbook: executing %s (%s; found while reading)", docname, reason)
                outcome = engine.execute_now(build, docname, self.notebook, self.nb_config, self.path)
                result = build.finished(docname, code, outcome, reported=False)
            if result.error:
                return self._failed(result, ExecutionError)
            self._show(docname, result.shown)

        def _show(self, docname: str, record: dict) -> None:
            outputs_into(self.notebook, record)
            engine.note_shown(docname, record_stamp(record))
            self.exec_metadata = {
                "mtime": record["executed"],
                "runtime": record["seconds"],
                "method": self.nb_config.execution_mode,
                "succeeded": True,
                "error": None,
                "traceback": None,
            }

        def _failed(self, result, error_class) -> None:
            if not result.reported:
                self.logger.warning(failure_message(result, self.nb_config), subtype="exec")
            if self.nb_config.execution_raise_on_error:
                # Reported already: the page and the cell's traceback are in the log above.
                raise error_class(str(self.path)) from (None if result.reported else result.exception)
            self.exec_metadata = {
                "mtime": result.started,
                "runtime": result.seconds,
                "method": self.nb_config.execution_mode,
                "succeeded": False,
                "error": result.error,
                "traceback": result.traceback,
            }

    return RecordedNotebookClient


def failure_message(result, nb_config) -> str:
    """What myst-nb says about a failed execution."""
    message = f"Executing notebook failed: {result.error}"
    return message + f"\n{result.traceback}" if nb_config.execution_show_tb else message


def serve_cache_mode_from_records(engine: Engine) -> None:
    """Make myst-nb's ``cache`` mode use this module's records instead of jupyter-cache.

    myst-nb offers no hook for a client of one's own: ``create_client`` picks its class by
    execution mode, looking ``NotebookClientCache`` up in its module on each call, so the
    name is rebound (tests/test_upstream_contracts.py checks that it still works this way).
    Were ``create_client`` to take a client class or a kernel manager from the configuration,
    this would be that setting instead.
    """
    import myst_nb.core.execute as execute

    if not hasattr(execute, "NotebookClientCache") or not callable(getattr(execute, "create_client", None)):
        raise ExtensionError(
            "bookext.execution.engine: myst-nb no longer has NotebookClientCache/create_client; "
            "this extension must follow its new execution API"
        )
    execute.NotebookClientCache = recorded_client_class(engine)  # create_client() looks the name up on each call


# --- reading a page as myst-nb will ------------------------------------------------------------


def notebook_of(env, docname: str):
    """The page as myst-nb will execute it, with its configuration; None if it is not executed from the cache."""
    from myst_nb.core.nb_to_tokens import nb_node_to_dict
    from myst_nb.core.read import create_nb_reader

    path = Path(env.doc2path(docname))
    nb_config = env.mystnb_config
    try:
        content = path.read_text(encoding="utf-8-sig")
    except OSError:
        return None
    reader = create_nb_reader(str(path), env.myst_config, nb_config, content)
    if reader is None:
        return None
    notebook = reader.read(content)
    # As myst_nb.sphinx_.Parser.parse does before it creates the execution client.
    kernel = notebook.metadata.get("kernelspec", {}).get("name")
    if kernel is not None:
        for pattern, alias in nb_config.kernel_rgx_aliases.items():
            if re.fullmatch(pattern, kernel):
                notebook.metadata["kernelspec"]["name"] = alias
                break
    if nb_config.metadata_key in notebook.metadata:
        overrides = nb_node_to_dict(notebook.metadata[nb_config.metadata_key])
        overrides.pop("output_folder", None)
        try:
            nb_config = nb_config.copy(**overrides)
        except Exception:  # noqa: BLE001 - myst-nb warns about it while reading
            return None
    if nb_config.execution_mode != "cache":
        return None
    posix = PurePosixPath(path.as_posix())
    if any(posix.match(pattern) for pattern in nb_config.execution_excludepatterns):
        return None
    return notebook, nb_config, path
