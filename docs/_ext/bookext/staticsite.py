"""Pages that load fast, offline and accessibly from any static host: all through hooks.

Each change below uses the hook Sphinx or the theme provides for it; the few
changes no hook can make are in :mod:`bookext.postprocess`.

* **Only what a page uses, nothing render-blocking but CSS** (``html-page-context``,
  editing the page's ``script_files`` and ``css_files``, as ``sphinx.ext.mathjax``
  adds its script only to pages with math): every script with a file is deferred;
  ``documentation_options.js`` is written into the page, since the theme's inline
  scripts that follow it read ``DOCUMENTATION_OPTIONS`` at once; sphinx-design's
  stylesheet and tab script only on pages with a card, dropdown or tab. The search
  page keeps Sphinx's order, as its search scripts expect. Template overrides in
  ``docs/_templates/`` drop the rest: the search index on every page
  (``layout.html``), fontawesome.js and script preloads (``static/webpack-macros.html``).
* **Accessibility** fixes to markup axe-core flags: node overrides for the
  bibliography's list items (docutils' deprecated ``doc-biblioentry`` role) and for
  folded cells' summaries (myst-nb's ``aria-label`` that contradicts the visible
  "Show code cell source"); template overrides for the search button's name and the
  sidebar's landmark; the sidebar's fold toggles (a ``<summary>`` holding only a
  decorative chevron, for an entry with sub-pages such as the API pages) named after
  their entry, by wrapping the theme's ``generate_toctree_html`` in the page context.
* **Findable**: every page gets a ``<meta name="description">`` (the items of its
  "In this section you will learn" box, else its first paragraph); the build writes
  ``sitemap.xml`` and ``robots.txt`` from ``ffnbook_site_url`` and gives ``404.html``
  a ``<base>`` so its links work at any missing address.
"""

from __future__ import annotations

import html
from pathlib import Path
from urllib.parse import urlparse

from docutils import nodes
from docutils.writers.html5_polyglot import HTMLTranslator
from sphinx.application import Sphinx

# Pages that are not content: no sitemap entry.
NOT_IN_SITEMAP = {"404", "search", "genindex", "py-modindex"}
DESCRIPTION_MAX = 155  # what search engines show of a description
DOCUMENTATION_OPTIONS = "_static/documentation_options.js"


# --- meta description ------------------------------------------------------------------


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


def add_404_base(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """The 404 page is served at any missing address: a ``<base>``, before every other
    address in its head, makes its relative links resolve from the site's root."""
    if pagename == "404":
        base = urlparse(_site_url(app)).path or "/"
        context["metatags"] = f'<base href="{html.escape(base)}" />\n' + context.get("metatags", "")


# --- scripts and stylesheets per page ---------------------------------------------------------


def _uses_sphinx_design(doctree: nodes.document | None) -> bool:
    return doctree is not None and any(
        cls.startswith("sd-") for node in doctree.findall(nodes.Element) for cls in node.get("classes", ())
    )


def load_only_what_the_page_uses(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Edit this page's script and stylesheet lists (the builder resets them for each page)."""
    scripts, styles = context.get("script_files"), context.get("css_files")
    if scripts is None or styles is None:
        return
    if not _uses_sphinx_design(doctree):
        styles[:] = [css for css in styles if "sphinx-design" not in str(css.filename)]
        scripts[:] = [js for js in scripts if "design-tabs.js" not in str(js.filename)]
    if pagename == "search":
        return
    for i, js in enumerate(scripts):
        if not js.filename:
            continue  # inline
        attributes = {k: v for k, v in js.attributes.items() if v is not None}
        if js.filename == DOCUMENTATION_OPTIONS:
            # The same template Sphinx writes the file from, with this page's context.
            options = app.builder.templates.render("static/documentation_options.js.jinja", context)
            body = options.strip().replace("</", "<\\/")  # cannot end the <script> early
            scripts[i] = type(js)("", priority=js.priority, body=body)
        elif not {"defer", "async"} & attributes.keys():
            scripts[i] = type(js)(js.filename, priority=js.priority, **attributes, defer="defer")


# --- node overrides: accessible markup ----------------------------------------------------------


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


# --- sitemap and robots.txt --------------------------------------------------------------


def _site_url(app: Sphinx) -> str:
    url = app.config.ffnbook_site_url
    return url if url.endswith("/") else url + "/"


def write_sitemap(app: Sphinx, exception) -> None:
    """sitemap.xml (every content page, in a stable order) and robots.txt pointing at it."""
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    base = _site_url(app)
    pages = sorted(
        d for d in app.env.found_docs if d not in NOT_IN_SITEMAP and not app.env.metadata.get(d, {}).get("orphan")
    )
    urls = "".join(f"  <url><loc>{html.escape(base + app.builder.get_target_uri(d))}</loc></url>\n" for d in pages)
    (out / "sitemap.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' + urls + "</urlset>\n",
        encoding="utf-8",
    )
    (out / "robots.txt").write_text(f"User-agent: *\nAllow: /\n\nSitemap: {base}sitemap.xml\n", encoding="utf-8")


def setup(app: Sphinx) -> dict:
    app.add_config_value("ffnbook_site_url", "https://example.org/", "html", types=[str])
    app.connect("html-page-context", add_meta_description)
    app.connect("html-page-context", add_404_base)
    # After the theme's handler (priority 500) has put generate_toctree_html in the context.
    app.connect("html-page-context", name_the_sidebar_toggles, priority=600)
    # Last, after the themes and extensions have added their files for the page.
    app.connect("html-page-context", load_only_what_the_page_uses, priority=900)
    app.add_node(nodes.citation, override=True, html=(visit_citation, HTMLTranslator.depart_citation))
    if "myst_nb" in app.extensions:
        from myst_nb.sphinx_ import HideCodeCellNode

        app.add_node(HideCodeCellNode, override=True, html=(visit_hidden_cell, depart_hidden_cell))
    app.connect("build-finished", write_sitemap)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
