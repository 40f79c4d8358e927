"""The book's own Sphinx extension: everything the build adds to Sphinx, myst-nb and the theme.

Loaded from ``conf.py`` (which puts ``docs/_ext`` on ``sys.path``) as one extension,
``bookext``, whose ``setup()`` registers its parts, one subpackage each, whose own
``setup()`` registers its modules (as Sphinx's own extensions do). None of this ships with
the ``ffnbook`` package: a reader's notebook never imports it.

* :mod:`bookext.execution` -- when a page's code executes again (the cache rules), and how:
  records, kernels forked from a template, the one adapter to myst-nb.
* :mod:`bookext.builds` -- one build at a time in a build folder; an incremental or
  interrupted build publishes what a clean one would; small rebuilds stay small.
* :mod:`bookext.notebooks` -- each page as a notebook a reader runs anywhere, and the
  downloads and launch buttons that point at it.
* :mod:`bookext.content` -- what the pages say beyond Markdown: math, glossary, self-checks,
  problems, citations, glued numbers, listings, explorables, figures' alt text.
* :mod:`bookext.website` -- the site as a reader gets it: what a page loads, its policy,
  metadata, sitemap and 404 page, previews, math font, and the small reading aids.

Each subpackage's docstring lists its modules. No module imports another in a cycle
(tests/test_ext_layout.py).
"""

from __future__ import annotations

from sphinx.application import Sphinx

# In this order: handlers of one event at one priority run in the order they were connected.
PARTS = ("bookext.execution", "bookext.builds", "bookext.notebooks", "bookext.content", "bookext.website")


def setup(app: Sphinx) -> dict:
    for part in PARTS:
        app.setup_extension(part)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
