"""Pages that load fast, offline and accessibly from any static host: all through hooks.

Each change below uses the hook Sphinx or the theme provides for it; the few
changes no hook can make are in :mod:`bookext.website.postprocess`.

* **Only what a page uses, nothing render-blocking but CSS** (``html-page-context``,
  editing the page's ``script_files`` and ``css_files``, as ``sphinx.ext.mathjax``
  adds its script only to pages with math): every script with a file is deferred;
  ``documentation_options.js`` is written into the page, since the theme's inline
  scripts that follow it read ``DOCUMENTATION_OPTIONS`` at once; sphinx-design's
  stylesheet and tab script only on pages with a card, dropdown or tab; the page's
  stylesheets after the theme's come as one file (``bundle_stylesheets``), one request
  instead of up to six before the first paint on a phone's connection. The search
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
  a ``<base>`` so its links work at any missing address. The search page's result
  snippets come from a page's article, without tooltips or controls
  (``docs/_static/searchsnippets.js``, which replaces Sphinx's ``Search.htmlToText``:
  Sphinx has no setting for what a snippet is cut from).
"""

from __future__ import annotations

import hashlib
import html
import os
import re
from pathlib import Path
from urllib.parse import urlparse

from docutils import nodes
from docutils.writers.html5_polyglot import HTMLTranslator
from sphinx.application import Sphinx
from sphinx.errors import SphinxError

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


class StylesheetNotBundled(SphinxError):
    """A stylesheet of the page cannot be joined to the others as it is."""

    category = "Stylesheet not bundled (bookext.website.staticsite)"


SOURCE_MAP_COMMENT = re.compile(r"/\*# sourceMappingURL=[^*]*\*/")
RELATIVE_URL = re.compile(r"""url\(\s*(?!['"]?(?:data:|[a-z]+://|/))""")


BUNDLE_PART = re.compile(r"^/\* (_static/[^ ]+) \*/$", re.M)


def _bundle_text(outdir: Path, names: list[str]) -> str:
    parts = []
    for name in map(Path, names):
        if name.parts[0] != "_static":
            raise StylesheetNotBundled(f"{name}: not in _static/")
        try:
            text = (outdir / name).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise StylesheetNotBundled(f"{name}: not in {outdir} when the pages are written") from None
        if "@import" in text or (len(name.parts) > 2 and RELATIVE_URL.search(text)):
            raise StylesheetNotBundled(f"{name}: an @import or a relative url() that would not resolve from _static/")
        parts.append(f"/* {name.as_posix()} */\n" + SOURCE_MAP_COMMENT.sub("", text).strip() + "\n")
    return "".join(parts)


def _write_bundle(target: Path, content: str) -> None:
    if not target.exists() or target.read_text(encoding="utf-8") != content:
        # Written whole, then renamed: parallel writers of pages may write the same file.
        temporary = target.with_name(f".{target.name}.{os.getpid()}")
        temporary.write_text(content, encoding="utf-8")
        os.replace(temporary, target)


def refresh_bundles(app: Sphinx, exception) -> None:
    """Make every bundle again from its files as they are when the build ends: a build
    that changed only a stylesheet rewrites no page (and so no bundle) by itself."""
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    for bundle in sorted((outdir / "_static").glob("styles-*.css")):
        names = BUNDLE_PART.findall(bundle.read_text(encoding="utf-8"))
        if not names:
            raise StylesheetNotBundled(f"{bundle}: names none of the stylesheets it joins")
        _write_bundle(bundle, _bundle_text(outdir, names))


def bundle_stylesheets(outdir: Path, styles: list) -> list:
    """The page's stylesheets (after the theme's own two) as one file, in their order.

    On a phone's slow connection each stylesheet is a request the first paint waits for;
    a chapter page had six besides the theme's (Pygments, the book theme, myst-nb, the
    book's own, problems, previews). The bundle is named after the files it joins, so
    pages that load the same files share it (and the reader's cache); Sphinx appends the
    digest of its content as for any stylesheet. A file the bundle cannot hold as it is
    (an ``@import``; a relative ``url()`` in a file outside ``_static/``, which would
    resolve elsewhere; an alternate or media-specific stylesheet) fails the build."""
    plain = {"rel": "stylesheet", "type": "text/css"}
    local = [css for css in styles if "://" not in str(css.filename)]
    if len(local) < 2:
        return styles
    for css in local:
        if {k: v for k, v in css.attributes.items() if v is not None} != plain:
            raise StylesheetNotBundled(f"{css.filename}: attributes {css.attributes} (only plain stylesheets)")
    names = [str(css.filename) for css in local]
    key = hashlib.sha256(" ".join(names).encode()).hexdigest()[:10]
    bundle = Path("_static") / f"styles-{key}.css"
    _write_bundle(outdir / bundle, _bundle_text(outdir, names))
    joined = type(local[0])(bundle.as_posix(), priority=local[0].priority)
    return [joined if css is local[0] else css for css in styles if css is local[0] or css not in local]


def stylesheets_before_the_pages(app: Sphinx, builder) -> None:
    """myst-nb copies its stylesheet only when the build finishes; the bundle of a page's
    stylesheets is made while the page is written, so it must be there, as it will be, before."""
    from bookext.builds.incremental import copy_myst_nb_stylesheet_first

    copy_myst_nb_stylesheet_first(app, builder)
    if builder.format == "html" and "pydata_sphinx_theme" in app.extensions:
        # pydata-sphinx-theme rewrites pygments.css (light and dark rules) only when the
        # build finishes, too; the same function, called now, writes the same file.
        from pydata_sphinx_theme.pygments import overwrite_pygments_css

        overwrite_pygments_css(app)


def search_snippets_from_the_text(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """The search page's snippets cut from a result page's article alone (searchsnippets.js):
    Sphinx's come from the whole main element, buttons, contents list and tooltips included."""
    if pagename == "search":
        app.add_js_file("searchsnippets.js", loading_method="defer")


def load_only_what_the_page_uses(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Edit this page's script and stylesheet lists (the builder resets them for each page)."""
    scripts, styles = context.get("script_files"), context.get("css_files")
    if scripts is None or styles is None:
        return
    if not _uses_sphinx_design(doctree):
        styles[:] = [css for css in styles if "sphinx-design" not in str(css.filename)]
        scripts[:] = [js for js in scripts if "design-tabs.js" not in str(js.filename)]
    styles[:] = bundle_stylesheets(Path(app.outdir), styles)
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
    app.connect("html-page-context", search_snippets_from_the_text)
    app.connect("html-page-context", add_meta_description)
    app.connect("html-page-context", add_404_base)
    # After the theme's handler (priority 500) has put generate_toctree_html in the context.
    app.connect("html-page-context", name_the_sidebar_toggles, priority=600)
    # Last, after the themes and extensions have added their files for the page.
    app.connect("html-page-context", load_only_what_the_page_uses, priority=900)
    app.connect("write-started", stylesheets_before_the_pages)
    app.add_node(nodes.citation, override=True, html=(visit_citation, HTMLTranslator.depart_citation))
    if "myst_nb" in app.extensions:
        from myst_nb.sphinx_ import HideCodeCellNode

        app.add_node(HideCodeCellNode, override=True, html=(visit_hidden_cell, depart_hidden_cell))
    app.connect("build-finished", write_sitemap)
    # After pydata-sphinx-theme's and myst-nb's handlers (priority 500) have written their files.
    app.connect("build-finished", refresh_bundles, priority=800)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
