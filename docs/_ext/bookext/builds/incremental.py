"""An incremental build publishes what a clean build of the same sources would.

Sphinx rebuilds incrementally: it reads again only pages whose source changed (and
the pages :mod:`bookext.execution.engine` names), writes again only those and the pages that
depend on them, and keeps the rest of the output folder. Four things Sphinx leaves
behind are done here:

* **Pages read but not written.** Sphinx saves what it read (``environment.pickle``,
  each page's doctree) before it writes a single page, and decides what to write next
  time from the date of each page's *source*. A page read again for another reason (its
  execution record changed: an ffnbook module it imports was edited) keeps its source's
  date, so a build stopped between reading and the end of writing (Ctrl-C, SIGTERM,
  SIGKILL, a crash) left every later build finding nothing to do, serving the old HTML
  and reader notebook. The pages a build is about to read are journaled beside the saved
  environment (``<doctrees>/ffnbook-unwritten.json``) before the first is read (and
  before any page executes); the journal is emptied by the last ``build-finished``
  handler of a build without error. A build that finds pages in the journal reads them
  again (from their records: nothing executes) and so writes them and the pages that
  depend on them. An unreadable journal counts as naming every page.
* **The search index's index entries** (``indexentries`` in ``searchindex.js``: the
  glossary's terms, the API's names). Sphinx keeps them in its environment but fills
  them in while writing, after the environment was saved, and does not read them back
  from the previous ``searchindex.js`` (sphinx-doc/sphinx#12599): after a clean build
  the index held 723 entries, after a no-op build 0, after a one-page edit 92 (the
  edited pages'). The entries of every page are kept here when the page is read, and
  the pages not written in a build get theirs back before the index is written. Words
  that only the rewritten pages had are dropped (Sphinx kept them, with no page).
* **Images and downloads no page uses any more** (``_images/``, ``_downloads/``): Sphinx
  copies those of the pages it writes and never removes one; a figure that changed left
  its old file published. Files that no published page or notebook refers to are removed.
* **myst-nb's stylesheet, linked alike.** Sphinx stamps a stylesheet's link with
  ``?v=<checksum>`` only when the file is in the output already, and myst-nb copies its
  stylesheet when the build finishes: a clean build linked it without the stamp, every
  later build with it. It is copied before the pages are written.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.index_entries import split_index_msg

from bookext.execution.records import write_atomically

logger = logging.getLogger(__name__)

JOURNAL = "ffnbook-unwritten.json"


# --- pages read but not written ---------------------------------------------------------------


def journal_path(app: Sphinx) -> Path:
    return Path(app.doctreedir) / JOURNAL


def unwritten(app: Sphinx) -> set[str] | None:
    """The pages the journal names; None when it is unreadable (then every page counts)."""
    try:
        pages = json.loads(journal_path(app).read_text(encoding="utf-8"))
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
        logger.info(
            "ffnbook: reading %d pages again that an earlier build read but did not finish writing: %s",
            len(again),
            ", ".join(again),
        )
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


# --- the search index's index entries ----------------------------------------------------------


def index_entries(doctree: nodes.document) -> list[tuple[str, str, str]]:
    """A page's entries as Sphinx's search indexer finds them (``IndexBuilder.feed``)."""
    found: set[tuple[str, str, str]] = set()
    for node in doctree.findall(addnodes.index):
        for entry_type, value, target_id, main, *_ in node["entries"]:
            try:
                parts = split_index_msg(entry_type, value)
            except ValueError:
                continue
            target_id = target_id or ""
            if entry_type in {"see", "seealso"}:
                found.add((parts[0], target_id, main))
            found |= {(part, target_id, main) for part in parts}
    return sorted(found)


def _kept(env) -> dict[str, list]:
    if not hasattr(env, "ffnbook_index_entries"):
        env.ffnbook_index_entries = {}
    return env.ffnbook_index_entries


def keep_index_entries(app: Sphinx, doctree: nodes.document) -> None:
    _kept(app.env)[app.env.docname] = index_entries(doctree)


def forget_index_entries(app: Sphinx, env, docname: str) -> None:
    _kept(env).pop(docname, None)


def merge_index_entries(app: Sphinx, env, docnames, other) -> None:
    theirs = _kept(other)
    _kept(env).update({d: theirs[d] for d in docnames if d in theirs})


def only_this_builds_entries(app: Sphinx, builder) -> None:
    """Before writing: the entries left in the saved environment are those of an older build."""
    entries = getattr(app.env, "_search_index_index_entries", None)
    if isinstance(entries, dict):
        entries.clear()


def restore_index_entries(app: Sphinx):
    """After writing, before the index is written: every indexed page's entries, in page order
    (a clean build's: it indexes the pages in that order)."""
    indexer = getattr(app.builder, "indexer", None)
    if indexer is None:
        return []
    fed = indexer._index_entries  # the pages written in this build
    kept = _kept(app.env)
    complete = {}
    for docname in sorted(indexer._titles):  # the indexed pages: written now or kept from before
        metadata = app.env.metadata.get(docname, {})
        if docname in fed:
            complete[docname] = fed[docname]
        elif "no-search" in metadata or "nosearch" in metadata:
            complete[docname] = []
        elif docname in kept:
            complete[docname] = kept[docname]
        else:  # read before this part kept entries: from its saved doctree
            complete[docname] = index_entries(app.env.get_doctree(docname))
    fed.clear()
    fed.update(complete)
    # Words only the rewritten pages used to have: Sphinx empties their page lists, a clean
    # build never lists them.
    for mapping in (indexer._mapping, indexer._title_mapping):
        for word in [word for word, pages in mapping.items() if not pages]:
            del mapping[word]
    return []


# --- images and downloads no page uses -----------------------------------------------------------


#: What a published page refers to: ``_images/<file>`` or ``_downloads/<folder>/<file>``.
REFERENCE = re.compile(r"(_images|_downloads)/([^\"'\s?#)<>/]+)")


def remove_unused_files(app: Sphinx, exception) -> None:
    """Remove the images and downloads that no published page or notebook refers to."""
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    used: set[tuple[str, str]] = set()
    for page in out.rglob("*"):
        if page.suffix in (".html", ".ipynb") and "_static" not in page.relative_to(out).parts:
            used.update(REFERENCE.findall(page.read_text(encoding="utf-8", errors="replace")))
    for folder in ("_images", "_downloads"):
        for path in sorted((out / folder).iterdir()) if (out / folder).is_dir() else []:
            if (folder, path.name) not in used:
                _remove(path)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


# --- myst-nb's stylesheet ------------------------------------------------------------------------


def copy_myst_nb_stylesheet_first(app: Sphinx, builder) -> None:
    if builder.format == "html" and "myst_nb" in app.extensions:
        from myst_nb.sphinx_ext import add_global_html_resources  # what myst-nb runs at build-finished

        (Path(app.outdir) / "_static").mkdir(parents=True, exist_ok=True)
        add_global_html_resources(app, None)


def setup(app: Sphinx) -> dict:
    app.connect("env-get-outdated", read_unwritten_pages_again)
    # Before bookext.execution.engine's handler (priority 500) starts executing pages, whose
    # records would make the next build take the pages as read.
    app.connect("env-before-read-docs", note_pages_to_write, priority=400)
    app.connect("doctree-read", keep_index_entries)
    app.connect("env-purge-doc", forget_index_entries)
    app.connect("env-merge-info", merge_index_entries)
    app.connect("write-started", only_this_builds_entries)
    app.connect("write-started", copy_myst_nb_stylesheet_first)
    app.connect("html-collect-pages", restore_index_entries)
    app.connect("build-finished", remove_unused_files)
    # The last handler of the build: after the HTML post-processing and the notebook downloads.
    app.connect("build-finished", all_written, priority=1000)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
