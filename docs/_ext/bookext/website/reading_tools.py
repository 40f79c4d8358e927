"""The reading tools in every page's article header, and the script behind them.

``docs/_templates/reading-tools.html`` (through the theme option ``article_header_end``)
offers the expertise level and the clickable-references switch. ``readertools.js`` runs
them, and the glossary terms' tooltips (:mod:`bookext.content.glossary_terms`) and the
self-checks (:mod:`bookext.content.selfcheck`) too; ``ffnbook.css`` is the book's own
stylesheet. (Downloads are the theme's download menu: :mod:`bookext.notebooks.downloads`.)
"""

from __future__ import annotations

from sphinx.application import Sphinx

from bookext.content.glossary_data import LEVELS

# Pages with nothing to read get no reading tools: the "page not found" page, and the
# pages Sphinx writes from templates alone (search, index), which have no doctree.
NO_READING_TOOLS = {"404"}


def offer_reading_tools(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Tell docs/_templates/reading-tools.html (in the article header, through the theme
    option ``article_header_end``) whether this page shows the reading tools, and the
    expertise levels it offers: the glossary's levels, the ones the tooltips carry."""
    context["reading_tools"] = doctree is not None and pagename not in NO_READING_TOOLS
    context["reading_levels"] = LEVELS


def setup(app: Sphinx) -> dict:
    app.connect("html-page-context", offer_reading_tools)
    app.add_css_file("ffnbook.css")
    app.add_js_file("readertools.js", loading_method="defer")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
