"""The book's own Sphinx extension: everything the build adds to Sphinx, myst-nb and the theme.

Loaded from ``conf.py`` (which puts ``docs/_ext`` on ``sys.path``) as one extension,
``bookext``, whose ``setup()`` registers its parts. None of this ships with the
``ffnbook`` package: a reader's notebook never imports it.

* :mod:`bookext.content.mathml` -- LaTeX rendered to MathML at build time (no script, no CDN).
* :mod:`bookext.mathfont` -- the site's own math font, cut to what the book uses.
* :mod:`bookext.content.glossary` -- the glossary page, from ``docs/glossary.yml``.
* :mod:`bookext.content.readertools` -- term tooltips by expertise level, self-checks, reading tools.
* :mod:`bookext.notebooks.downloads` -- the notebook a page's download menu offers.
* :mod:`bookext.execution.engine` -- when a page's code is executed again (the cache rules), in three
  layers: :mod:`bookext.execution.records` (the policy: records, what is stale and why),
  :mod:`bookext.execution.kernels` with ``kernel_template.py`` (processes: kernels forked from a
  template), :mod:`bookext.execution.mystnb_adapter` (the one place that plugs into myst-nb).
* :mod:`bookext.builds.incremental` -- an incremental or interrupted build publishes what a clean one would.
* :mod:`bookext.builds.buildlock` -- one build at a time in a build folder.
* :mod:`bookext.staticsite` -- light, offline, accessible, findable pages, through hooks.
* :mod:`bookext.content.figurealt` -- alt text of glued figures from the figure functions themselves.
* :mod:`bookext.content.citations` -- author–year citations that never print the same text twice.
* :mod:`bookext.postprocess` -- the few edits of the finished HTML no hook can make, each checked.
* :mod:`bookext.publishing` -- link previews, same-host policy, the PDF link, 404 in-page links.
* :mod:`bookext.content.explorables` -- interactive figures computed in the browser, no kernel.
* :mod:`bookext.content.problems` -- numeric problems checked against the answers the build computed.
* :mod:`bookext.previews` -- hover and focus previews of figures, equations, sections, citations.
* :mod:`bookext.notebooks.reader_notebooks` -- each page as a notebook a reader runs anywhere;
  launch buttons (Colab, Binder) and downloads point at it. Its parts: :mod:`bookext.notebooks.notebook_cells`
  (code cells), :mod:`bookext.notebooks.myst_markdown` (Markdown), :mod:`bookext.notebooks.site_resolver` (what Sphinx
  resolves), :mod:`bookext.notebooks.notebook_setup` (setup cell, pins, Binder).
* :mod:`bookext.copycode` -- a Copy button on every code cell.
* :mod:`bookext.navigation` -- the sidebar toggles' keyboard focus; section links close the drawer.
* :mod:`bookext.builds.buildspeed` -- fewer forks and collections in a small rebuild; figures numbered
  only after a page was read.
* :mod:`bookext.builds.pagestate` -- what a step that reads every built page made of each, kept for the
  next build, so it redoes its work only for pages that changed.
* :mod:`bookext.content.numbers` -- glued numbers in the book's format (no "0.00e+00").
* :mod:`bookext.content.listings` -- listings of ffnbook's code without API markup, methods in their class.
* :mod:`bookext.figurelinks` -- a tap or click on a figure opens its SVG full size.
* :mod:`bookext.phonefigures` -- on a narrow screen a figure shows its drawing for a phone.

The theme's templates the book overrides are in ``docs/_templates/``.
"""

from __future__ import annotations

from sphinx.application import Sphinx

PARTS = (
    "bookext.content.mathml",
    "bookext.mathfont",
    "bookext.content.glossary",
    "bookext.content.readertools",
    "bookext.execution",
    "bookext.builds.incremental",
    "bookext.builds.buildlock",
    "bookext.staticsite",
    "bookext.content.figurealt",
    "bookext.notebooks.downloads",
    "bookext.content.citations",
    "bookext.postprocess",
    "bookext.publishing",
    "bookext.content.explorables",
    "bookext.content.problems",
    "bookext.previews",
    "bookext.notebooks.reader_notebooks",
    "bookext.copycode",
    "bookext.navigation",
    "bookext.builds.buildspeed",
    "bookext.content.numbers",
    "bookext.content.listings",
    "bookext.figurelinks",
    "bookext.phonefigures",
)


def setup(app: Sphinx) -> dict:
    for part in PARTS:
        app.setup_extension(part)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
