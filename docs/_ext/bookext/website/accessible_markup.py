"""Markup axe-core flags, made accessible through Sphinx's and the theme's hooks.

* The bibliography's entries: docutils writes each with the deprecated
  ``doc-biblioentry`` role (DPUB-ARIA 1.1), which is not a list item; a node override
  writes them as list items of a ``role="list"`` wrapper.
* myst-nb's folded cells: their summary carries an ``aria-label`` that contradicts the
  visible "Show code cell source" (a label that differs from the visible text confuses
  speech-input users); a node override writes the summary without it.
* The sidebar's fold toggles (a ``<summary>`` holding only a decorative chevron, for an
  entry with sub-pages such as the API pages) are named after their entry, by wrapping
  the theme's ``generate_toctree_html`` in the page context.

Template overrides in ``docs/_templates/`` name the search button and the sidebar's landmark.
"""

from __future__ import annotations

import html

from docutils import nodes
from docutils.writers.html5_polyglot import HTMLTranslator
from sphinx.application import Sphinx


def visit_citation(self: HTMLTranslator, node: nodes.citation) -> None:
    """Each bibliography entry as a list item of docutils' ``role="list"`` wrapper;
    docutils' ``doc-biblioentry`` is deprecated (DPUB-ARIA 1.1) and is not a list item."""
    if not isinstance(node.previous_sibling(), type(node)):
        self.body.append('<div role="list" class="citation-list">\n')
    self.body.append(self.starttag(node, "div", classes=[node.tagname], role="listitem"))


def visit_hidden_cell(self: HTMLTranslator, node: nodes.Element) -> None:
    """myst-nb's folded cell, with no ``aria-label`` on its summary: the visible
    "Show code cell source" is the summary's name (a label that differs from the
    visible text confuses speech-input users)."""
    self.body.append(f'<details class="admonition hide {" ".join(node["classes"])}">\n<summary>\n')
    for state, prompt in (("collapsed", "prompt_show"), ("expanded", "prompt_hide")):
        self.body.append(f'<p class="{state} admonition-title">{html.escape(node[prompt])}</p>\n')
    self.body.append("</summary>\n")


def depart_hidden_cell(self: HTMLTranslator, node: nodes.Element) -> None:
    self.body.append("</details>\n")


def name_the_sidebar_toggles(app: Sphinx, pagename, templatename, context, doctree) -> None:
    generate = context.get("generate_toctree_html")
    if generate is None:
        return

    def named(*args, **kwargs):
        nav = generate(*args, **kwargs)
        if hasattr(nav, "select"):  # the sidebar's tree (BeautifulSoup), not raw HTML
            for summary in nav.select("li.has-children > details > summary"):
                entry = summary.find_parent("li").find("a", recursive=False)
                if entry is not None:
                    summary["aria-label"] = f"Pages under {entry.get_text(' ', strip=True)}"
        return nav

    context["generate_toctree_html"] = named


def setup(app: Sphinx) -> dict:
    # After the theme's handler (priority 500) has put generate_toctree_html in the context.
    app.connect("html-page-context", name_the_sidebar_toggles, priority=600)
    app.add_node(nodes.citation, override=True, html=(visit_citation, HTMLTranslator.depart_citation))
    if "myst_nb" in app.extensions:
        from myst_nb.sphinx_ import HideCodeCellNode

        app.add_node(HideCodeCellNode, override=True, html=(visit_hidden_cell, depart_hidden_cell))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
