"""Every page's ``<meta name="description">``, which search engines show under its title.

The items of the page's "In this section you will learn" box, else its first paragraph;
the link previews (:mod:`bookext.website.link_previews`) reuse it.
"""

from __future__ import annotations

import html

from docutils import nodes
from sphinx.application import Sphinx

DESCRIPTION_MAX = 155  # what search engines show of a description


def _clean(text: str) -> str:
    return " ".join(text.split())


def page_description(doctree: nodes.document) -> str:
    """A one-sentence summary: the learning goals if the page has them, else its first paragraph."""
    for admonition in doctree.findall(nodes.admonition):
        titles = list(admonition.findall(nodes.title))
        if titles and "you will learn" in titles[0].astext().lower():
            items = [_clean(item.astext()).rstrip(";.") for item in admonition.findall(nodes.list_item)]
            if items:
                return _shorten("Learn " + "; ".join(items) + ".")
    for paragraph in doctree.findall(nodes.paragraph):
        if any(
            isinstance(
                p,
                (
                    nodes.admonition,
                    nodes.Admonition,
                    nodes.field_list,
                    nodes.table,
                    nodes.topic,
                    nodes.sidebar,
                    nodes.footnote,
                    nodes.citation,
                ),
            )
            for p in _ancestors(paragraph)
        ):
            continue
        text = _clean(paragraph.astext())
        if len(text) > 40:
            return _shorten(text)
    title = next(iter(doctree.findall(nodes.title)), None)
    return _clean(title.astext()) if title else ""


def _ancestors(node: nodes.Node):
    while node.parent is not None:
        node = node.parent
        yield node


def _shorten(text: str) -> str:
    if len(text) <= DESCRIPTION_MAX:
        return text
    cut = text[: DESCRIPTION_MAX - 1].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + "\u2026"


def add_meta_description(app: Sphinx, pagename, templatename, context, doctree) -> None:
    metatags = context.get("metatags", "")
    if 'name="description"' in metatags:
        return  # the page sets its own
    if doctree is not None:
        text = page_description(doctree)
    elif pagename == "search":
        text = f"Search {app.config.project}."
    elif pagename == "genindex":
        text = f"Index of the terms and names in {app.config.project}."
    else:
        text = app.config.project
    if text:
        tag = f'<meta name="description" content="{html.escape(text)}" />'
        context["metatags"] = metatags + "\n" + tag


def setup(app: Sphinx) -> dict:
    app.connect("html-page-context", add_meta_description)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
