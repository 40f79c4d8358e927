"""Reader notebooks: each executed page as a notebook a reader runs anywhere, and its downloads.

* :mod:`bookext.notebooks.reader_notebooks` -- assembles a page's notebook and writes it; launch
  buttons (Colab, Binder) point at it.
* :mod:`bookext.notebooks.notebook_cells` -- its code cells, without the build's plumbing.
* :mod:`bookext.notebooks.myst_markdown` -- its Markdown cells: MyST as plain Markdown (no Sphinx).
* :mod:`bookext.notebooks.site_resolver` -- what Sphinx resolves (references, glued numbers,
  listings), as that Markdown shows it.
* :mod:`bookext.notebooks.notebook_setup` -- its setup cell, pins and Binder environment, all
  pinned to the commit the site was built from.
* :mod:`bookext.notebooks.downloads` -- what a page's download menu offers.
"""

from __future__ import annotations

from sphinx.application import Sphinx

PARTS = ("downloads", "reader_notebooks")


def setup(app: Sphinx) -> dict:
    for part in PARTS:
        app.setup_extension(f"bookext.notebooks.{part}")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
