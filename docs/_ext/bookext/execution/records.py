"""Execution records and when they are stale: the execution engine's policy, with no process,
kernel or Sphinx in it (:mod:`bookext.execution.engine` says when and why pages execute).

* **What a page's outputs depend on** (:func:`code_hash`, :class:`Checker`): its code cells
  and how they run, the SHA-256 of every project file it used (modules imported, files
  read, folders listed, as the kernel's probe reported), ``requirements.txt``, the
  Python version and the kernels' thread settings. :meth:`Checker.stale` says, in words
  for the build log, why a record no longer stands for the page (None when it does).
* **Records** (:class:`RecordStore`): ``<build>/.execution/<page>.json``, one per page,
  written whole (a temporary file renamed into place) with a digest of its contents;
  read back only whole, for the right page and matching its digest, else discarded.
  :func:`record_mismatch` says whether a record's outputs fit a page's code cells.
* **How pages look** (:func:`rendering_hash`): a hash of the build machinery; when it
  changes every page is rendered again (from its record).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

DOCS = Path(__file__).resolve().parents[3]  # docs/: the pages and, beside them, this extension
ROOT = DOCS.parent
#: How pages are rendered, not what their code computes.
RENDERING = (DOCS / "_ext", DOCS / "_static", DOCS / "_templates", DOCS / "glossary.yml")
STORE = ".execution"
RECORD_FORMAT = 3  # 2: records carry a digest of their contents; 3: and the packages the page imported
#: A file modified while the page that used it ran: never equal to a file's hash.
MODIFIED_DURING_RUN = "modified while the page ran"


# --- hashes ----------------------------------------------------------------------------------


def _files(path: Path) -> list[Path]:
    """Source files under ``path`` (or ``path`` itself); compiled bytecode follows from them."""
    if path.is_file():
        return [path]
    return sorted(
        p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".pyo")
    )


def rendering_hash(paths=RENDERING) -> str:
    """SHA-256 (first 16 hex digits) of the build machinery that decides how pages look."""
    digest = hashlib.sha256()
    for root in paths:
        for path in _files(root):
            digest.update(str(path.relative_to(root.parent)).encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def file_digest(path: Path) -> str | None:
    """SHA-256 of a file's bytes; None when it does not exist or cannot be read."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def listing_digest(path: Path) -> str | None:
    """SHA-256 of a folder's sorted names; None when it does not exist or cannot be listed."""
    try:
        return hashlib.sha256("\n".join(sorted(os.listdir(path))).encode()).hexdigest()
    except OSError:
        return None


def code_hash(notebook, nb_config) -> str:
    """What decides a page's outputs inside the page: its code cells and how they run."""
    payload = {
        "kernel": notebook.metadata.get("kernelspec", {}).get("name"),
        "execution": notebook.metadata.get("execution", {}),
        "allow_errors": nb_config.execution_allow_errors,
        "in_temp": nb_config.execution_in_temp,
        "cells": [[cell.source, cell.metadata] for cell in notebook.cells if cell.cell_type == "code"],
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


class Checker:
    """Tells whether a record is still valid; hashes each file once per check."""

    def __init__(self, requirements: Path, threads: dict | None = None) -> None:
        self.requirements = requirements
        self.threads = threads or {}  # the kernels' thread settings (kernel_template.kernel_threads)
        self._files: dict[str, str | None] = {}
        self._folders: dict[str, str | None] = {}

    def file(self, path: str) -> str | None:
        if path not in self._files:
            self._files[path] = file_digest(Path(path))
        return self._files[path]

    def folder(self, path: str) -> str | None:
        if path not in self._folders:
            self._folders[path] = listing_digest(Path(path))
        return self._folders[path]

    def stale(self, record: dict | None, code: str | None = None) -> str | None:
        """Why ``record`` cannot stand for the page's execution now; None when it can."""
        if not isinstance(record, dict):
            return "no usable record"
        if record.get("format") != RECORD_FORMAT:
            return "its record is of an older format"
        if code is not None and record.get("code") != code:
            return "its code changed"
        if record.get("untracked"):
            return "its kernel could not report what it used"
        if record.get("python") != sys.version:
            return "the Python version changed"
        if record.get("requirements") != self.file(str(self.requirements)):
            return "requirements.txt changed"
        if record.get("threads", {}) != self.threads:
            return "the kernels' thread settings changed"
        for path, digest in record.get("files", {}).items():
            if self.file(path) != digest:
                return f"{shown_path(path)} changed"
        for path, digest in record.get("folders", {}).items():
            if self.folder(path) != digest:
                return f"the names in {shown_path(path)}/ changed"
        return None


def shown_path(path: str) -> str:
    try:
        return str(Path(path).relative_to(ROOT.resolve()))
    except ValueError:
        return path


# --- the record store ------------------------------------------------------------------------

_UMASK = os.umask(0o022)
os.umask(_UMASK)


def write_atomically(path: Path, text: str | bytes) -> None:
    """Replace ``path`` whole: a reader sees the old file or the new one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".writing-", suffix=path.suffix)
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)  # an ordinary file, not mkstemp's owner-only one
        with os.fdopen(fd, "wb") if isinstance(text, bytes) else os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def record_digest(record: dict) -> str:
    """SHA-256 of everything a record holds but its digest (JSON with sorted keys)."""
    contents = {key: value for key, value in record.items() if key != "digest"}
    return hashlib.sha256(json.dumps(contents, sort_keys=True).encode()).hexdigest()


def _record_problem(text: str, docname: str) -> tuple[dict | None, str | None]:
    """The record in ``text`` and why it cannot be used (None: it can)."""
    try:
        record = json.loads(text)
    except ValueError:
        return None, "it is not a whole JSON record"
    if not isinstance(record, dict):
        return None, "it is not a JSON object"
    if record.get("docname") != docname:
        return None, f"it is the record of {record.get('docname')!r}"
    if record.get("format") == RECORD_FORMAT or "digest" in record:
        if record.get("digest") != record_digest(record):
            return None, "its contents do not match their digest"
    return record, None


class RecordStore:
    """One JSON file per page, replaced whole (write a temporary file, then rename), with a
    digest of its contents. A record that is unreadable as one, belongs to another page or
    does not match its digest is discarded when read: the file is deleted (so the page
    executes and writes a new one) and ``discarded(docname, path, why)`` is told."""

    def __init__(self, folder: Path, discarded=None) -> None:
        self.folder = Path(folder)
        self.discarded = discarded

    def path(self, docname: str) -> Path:
        return self.folder / (quote(docname, safe="") + ".json")

    def read(self, docname: str) -> dict | None:
        path = self.path(docname)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:  # none yet, or not readable (then writing it fails loudly)
            return None
        except ValueError:
            text = ""
        record, problem = _record_problem(text, docname)
        if problem is not None:
            self.discard(docname, problem)
        return record

    def discard(self, docname: str, why: str) -> None:
        """Throw a page's record away: the page executes again."""
        path = self.path(docname)
        path.unlink(missing_ok=True)
        if self.discarded is not None:
            self.discarded(docname, path, why)

    def write(self, docname: str, record: dict) -> None:
        """Write ``record`` with its digest (set in ``record`` too)."""
        record["digest"] = record_digest(record)
        write_atomically(self.path(docname), json.dumps(record))

    def remove(self, docname: str) -> None:
        self.path(docname).unlink(missing_ok=True)
        self.failure_path(docname).unlink(missing_ok=True)

    def failure_path(self, docname: str) -> Path:
        return self.folder / (quote(docname, safe="") + ".failed")

    def read_failure(self, docname: str) -> dict | None:
        try:
            return json.loads(self.failure_path(docname).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def write_failure(self, docname: str, failure: dict) -> None:
        write_atomically(self.failure_path(docname), json.dumps(failure))

    def remove_leftovers(self, older_than: float = 3600) -> None:
        """Temporary files of writers that died (old enough that no writer still owns them)."""
        for path in self.folder.glob(".writing-*"):
            try:
                if time.time() - path.stat().st_mtime > older_than:
                    path.unlink()
            except OSError:
                pass


# --- what a record holds --------------------------------------------------------------------


def record_stamp(record: dict | None) -> str | None:
    """Which record a page was read from: its digest (any change to a record changes it)."""
    return record.get("digest") if isinstance(record, dict) else None


def record_outputs(outcome) -> dict:
    """What a page shows from an execution: each code cell's outputs, and when it ran."""
    notebook = outcome.notebook
    return {
        "executed": outcome.started,
        "seconds": outcome.seconds,
        "metadata": {k: notebook.metadata[k] for k in ("language_info", "widgets") if k in notebook.metadata},
        "cells": [
            {"execution_count": c.get("execution_count"), "outputs": c.get("outputs", [])}
            for c in notebook.cells
            if c.cell_type == "code"
        ],
    }


OUTPUT_TYPES = {"stream", "display_data", "execute_result", "error"}


def record_mismatch(notebook, record: dict) -> str | None:
    """Why ``record`` cannot give ``notebook`` its outputs (None: it can)."""
    cells = record.get("cells")
    code_cells = sum(c.cell_type == "code" for c in notebook.cells)
    if not isinstance(cells, list) or len(cells) != code_cells:
        return (
            f"it holds outputs for {len(cells) if isinstance(cells, list) else 'no'} code cells, "
            f"the page has {code_cells}"
        )
    for number, stored in enumerate(cells):
        outputs = stored.get("outputs") if isinstance(stored, dict) else None
        if not isinstance(outputs, list) or not all(
            isinstance(o, dict) and o.get("output_type") in OUTPUT_TYPES for o in outputs
        ):
            return f"the outputs of code cell {number} are not notebook outputs"
    if not isinstance(record.get("metadata"), dict) or not all(
        isinstance(record.get(key), (int, float)) for key in ("executed", "seconds")
    ):
        return "it lacks the notebook's metadata or the execution's time"
    return None
