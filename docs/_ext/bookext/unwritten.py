"""Pages read but not yet written: a build stopped after reading writes them in the next build.

Sphinx saves what it read (``environment.pickle`` and each page's doctree) before it
writes a single page, and decides what to write next time by comparing each page's
HTML with its *source* file. A page read again for another reason (its execution
record changed: an ffnbook module it imports was edited) keeps its source's date, so
when a build stops between reading and the end of writing (Ctrl-C, SIGTERM, SIGKILL,
a crash), every later build finds nothing to do and serves the old HTML and reader
notebook for good.

This part keeps a journal beside the saved environment (``<doctrees>/ffnbook-unwritten.json``):
the pages a build is about to read are added to it before the first one is read, and
the journal is emptied only when the build has finished writing everything (the last
``build-finished`` handler of a build without an error). A build that finds pages in
the journal reads them again (from their execution records: nothing executes again),
so they and the pages that depend on them are written. An unreadable journal counts as
naming every page.
"""

from __future__ import annotations

import json
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from bookext.execution import write_atomically

logger = logging.getLogger(__name__)

JOURNAL = "ffnbook-unwritten.json"


def journal_path(app: Sphinx) -> Path:
    return Path(app.doctreedir) / JOURNAL


def unwritten(app: Sphinx) -> set[str] | None:
    """The pages the journal names; None when it is unreadable (then every page counts)."""
    path = journal_path(app)
    try:
        pages = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return set()
    except (OSError, ValueError):
        return None
    if not isinstance(pages, list) or not all(isinstance(p, str) for p in pages):
        return None
    return set(pages)


def read_unwritten_pages_again(app: Sphinx, env, added, changed, removed) -> list[str]:
    pages = unwritten(app)
    if pages is None:
        logger.info("ffnbook: %s is unreadable; reading every page again", journal_path(app))
        pages = set(env.found_docs)
    again = sorted(pages & env.found_docs - set(added) - set(changed) - set(removed))
    if again:
        logger.info("ffnbook: reading %d pages again that an earlier build read but did not "
                    "finish writing: %s", len(again), ", ".join(again))
    return again


def note_pages_to_write(app: Sphinx, env, docnames: list[str]) -> None:
    """Before the first page is read (and before any page executes): journal them all."""
    if not docnames:
        return
    before = unwritten(app)
    pages = set(docnames) | (before if before is not None else set(env.found_docs))
    if pages != before:
        write_atomically(journal_path(app), json.dumps(sorted(pages)))


def all_written(app: Sphinx, exception) -> None:
    """The build wrote every page it read, and finished its output: nothing is left unwritten."""
    if exception is None:
        journal_path(app).unlink(missing_ok=True)


def setup(app: Sphinx) -> dict:
    app.connect("env-get-outdated", read_unwritten_pages_again)
    # Before bookext.execution's handler (priority 500) starts executing pages, whose
    # records would make the next build take the pages as read.
    app.connect("env-before-read-docs", note_pages_to_write, priority=400)
    # The last handler of the build: after the HTML post-processing and the notebook downloads.
    app.connect("build-finished", all_written, priority=1000)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
