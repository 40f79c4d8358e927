"""What a reader downloads from a page: the theme's one download menu, fed by the book.

sphinx-book-theme's download menu (in the article header; theme option
``use_download_button``) offers the page's source (``.md``), printing to PDF, and a
notebook (``.ipynb``) when the page context names one in ``ipynb_source``, as a file
in the site's ``_sources/``. For each notebook page the book names that file
(:func:`link_notebook_download`) and writes it (:func:`write_notebook_downloads`),
after the theme and myst-nb have written theirs: the reader's notebook that
:mod:`bookext.notebooks.reader_notebooks` made of the page (the one Colab and Binder open).
A project without that part (the theme tests' tiny book, tests/roots/test-theme) gets
what :func:`reader_notebook` makes of myst-nb's notebook instead; the book itself
never takes that path.
"""

from __future__ import annotations

import json
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from bookext.notebooks.notebook_setup import reader_notebook_uri

logger = logging.getLogger(__name__)


def mystnb_notebook(app: Sphinx, pagename: str) -> Path:
    """Where myst-nb writes the page as a notebook when it reads the page (beside the html
    folder), outputs included: in ``cache`` mode bookext.execution.engine's client gives it the
    record's outputs whether the page executed in this build or not."""
    return Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"


def is_notebook(app: Sphinx, pagename: str) -> bool:
    """Whether the page is a notebook (a kernelspec in its front matter)."""
    return "kernelspec" in app.env.metadata.get(pagename, {})


def reader_notebook(page_notebook: dict) -> dict:
    """The notebook a reader downloads for a page, made from myst-nb's notebook of the page.

    Today: that notebook as it is, with its cell ids numbered (``cell-0``,
    ``cell-1``...) instead of the random ones it gets each time a page becomes a
    notebook, so two builds offer the same file.
    """
    notebook = dict(page_notebook)
    notebook["cells"] = [
        {**cell, "id": f"cell-{i}"} if "id" in cell else cell for i, cell in enumerate(page_notebook.get("cells", []))
    ]
    return notebook


def link_notebook_download(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Name the page's notebook in the theme's download menu: ``_sources/<page>.ipynb``."""
    if is_notebook(app, pagename) and mystnb_notebook(app, pagename).exists():
        context["ipynb_source"] = f"{pagename}.ipynb"


def write_notebook_downloads(app: Sphinx, exception) -> None:
    """Write ``_sources/<page>.ipynb`` for every notebook page (replacing the theme's copy)."""
    if exception is not None or app.builder.format != "html":
        return
    for pagename in sorted(d for d in app.env.found_docs if is_notebook(app, d)):
        source = mystnb_notebook(app, pagename)
        if not source.exists():
            logger.warning("no notebook %s to offer for download", source, location=pagename)
            continue
        written = Path(app.outdir) / reader_notebook_uri(pagename)  # by bookext.notebooks.reader_notebooks
        if written.exists():
            text = written.read_text(encoding="utf-8")
        else:
            notebook = reader_notebook(json.loads(source.read_text(encoding="utf-8")))
            text = json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"
        target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")


def setup(app: Sphinx) -> dict:
    # Before the theme builds its download menu from the context (priority 501).
    app.connect("html-page-context", link_notebook_download, priority=500)
    app.connect("build-finished", write_notebook_downloads)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
