"""The search page's result snippets, cut from a result page's article alone.

Sphinx's snippets come from the whole main element, buttons, contents list and tooltips
included, and Sphinx has no setting for what a snippet is cut from: the search page loads
``docs/_static/searchsnippets.js``, which replaces Sphinx's ``Search.htmlToText``.
"""

from __future__ import annotations

from sphinx.application import Sphinx


def search_snippets_from_the_text(app: Sphinx, pagename, templatename, context, doctree) -> None:
    if pagename == "search":
        app.add_js_file("searchsnippets.js", loading_method="defer")


def setup(app: Sphinx) -> dict:
    app.connect("html-page-context", search_snippets_from_the_text)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
