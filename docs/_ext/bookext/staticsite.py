"""Pages that load fast, offline and accessibly from any static host.

The book theme ships more than a chapter page uses. After the build, this
extension rewrites the written pages (and one theme stylesheet) so that each
page loads only what it needs, and adds what search engines and hosts look for:

* **Icons without a 1.5 MB script.** pydata-sphinx-theme draws its icons with
  Font Awesome's ``fontawesome.js`` (540 KiB gzipped), which swaps every
  ``<i class="fa-solid fa-…">`` for an ``<svg>`` at run time. Here the swap is
  done at build time, with the same path data taken from the installed theme's
  script and the same ``svg-inline--fa`` markup, so the look is unchanged; the
  script is not loaded, and the ``.fa-*`` glyph rules of icons no page uses are
  removed from the theme's stylesheet. An icon missing from the script is a
  build warning.
* **Nothing render-blocking but CSS.** Sphinx's small scripts are deferred,
  ``documentation_options.js`` is inlined, and the search index (100 KiB, loaded
  by the theme on every page for a search-as-you-type mode this book leaves off)
  is loaded only by the search page. Preloads of deferred scripts are dropped.
* **Accessibility fixes** to theme markup that axe-core flags: search buttons
  whose accessible name hid their visible text, the sidebar outside any
  landmark, folded cells' summaries, the bibliography's deprecated ARIA role.
* **Reproducible downloads.** The downloadable notebooks' random cell ids are numbered.
* **Findable.** Every page gets a ``<meta name="description">``: the items of its
  "In this section you will learn" box, else its first paragraph. The build
  writes ``sitemap.xml`` and ``robots.txt`` from ``ffnbook_site_url``, and gives
  ``404.html`` a ``<base>`` so its links work at any missing address.

All rewrites are plain string edits of the finished HTML, so the output
stays byte-for-byte reproducible.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from urllib.parse import urlparse

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

# Pages that are not content: no sitemap entry.
NOT_IN_SITEMAP = {"404", "search", "genindex", "py-modindex"}
DESCRIPTION_MAX = 155  # what search engines show of a description

FA_PACKS = {"fa-solid": "fas", "fas": "fas", "fa-regular": "far", "far": "far",
            "fa-brands": "fab", "fab": "fab"}
FA_TAG = re.compile(
    r'<(i|span) class="([^"]*\b(?:fa-solid|fas|fa-regular|far|fa-brands|fab)\b[^"]*)"'
    r'((?: (?:data-[a-z-]+|title)="[^"]*")*)(?: aria-hidden="true")?\s*></\1>'
)
# The icons pydata-sphinx-theme's own script creates at run time (announcement banner).
FA_RUNTIME = {"xmark"}


# --- meta description ------------------------------------------------------------------


def _clean(text: str) -> str:
    return " ".join(text.split())


def page_description(doctree: nodes.document) -> str:
    """A one-sentence summary: the learning goals if the page has them, else its first paragraph."""
    for admonition in doctree.findall(nodes.admonition):
        titles = list(admonition.findall(nodes.title))
        if titles and "you will learn" in titles[0].astext().lower():
            items = [_clean(item.astext()).rstrip(";.")
                     for item in admonition.findall(nodes.list_item)]
            if items:
                return _shorten("Learn " + "; ".join(items) + ".")
    for paragraph in doctree.findall(nodes.paragraph):
        if any(isinstance(p, (nodes.admonition, nodes.Admonition, nodes.field_list, nodes.table,
                              nodes.topic, nodes.sidebar, nodes.footnote, nodes.citation))
               for p in _ancestors(paragraph)):
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


# --- icons ------------------------------------------------------------------------------


def _fontawesome_icons(theme_js: Path) -> dict[tuple[str, str], tuple[int, int, str]]:
    """(pack, name) -> (width, height, path) parsed from the theme's fontawesome.js."""
    text = theme_js.read_text(encoding="utf-8")
    icons: dict[tuple[str, str], tuple[int, int, str]] = {}
    # Each pack is written as ``var b={name:[w,h,[aliases],"f104","M…"],…}`` and then
    # registered with ``p("fas",b)`` (or "far", "fab").
    icon = re.compile(r'"?([a-z0-9-]+)"?:\[(\d+),(\d+),\[[^\]]*\],"[0-9a-f]+","(M[^"]+)"\]')
    start = 0
    for register in re.finditer(r'p\("(fa[srb])",b\)', text):
        begin = text.rfind("var b={", start, register.start())
        if begin >= 0:
            for m in icon.finditer(text, begin, register.start()):
                icons.setdefault((register.group(1), m.group(1)),
                                 (int(m.group(2)), int(m.group(3)), m.group(4)))
        start = register.end()
    return icons


def _icon_svg(classes: str, attrs: str, icons: dict, missing: set) -> str | None:
    words = classes.split()
    pack = next((FA_PACKS[w] for w in words if w in FA_PACKS), "fas")
    names = [w[3:] for w in words if w.startswith("fa-") and w not in FA_PACKS
             and (pack, w[3:]) in icons]
    if not names:
        missing.add(classes)
        return None
    name = names[0]
    width, height, path = icons[(pack, name)]
    extra = " ".join(w for w in words if w not in FA_PACKS and w != f"fa-{name}")
    cls = f"svg-inline--fa fa-{name}" + (f" {extra}" if extra else "")
    return (f'<svg class="{cls}"{attrs} aria-hidden="true" focusable="false" data-prefix="{pack}" '
            f'data-icon="{name}" role="img" xmlns="http://www.w3.org/2000/svg" '
            f'viewBox="0 0 {width} {height}"><path fill="currentColor" d="{path}"></path></svg>')


# The rules fontawesome.js would inject for its inline SVGs (only those the pages use).
SVG_ICON_CSS = """
/* ffnbook.staticsite: icons are inline SVG written at build time (see staticsite.py). */
.svg-inline--fa{box-sizing:content-box;display:var(--fa-display,inline-block);height:1em;
overflow:visible;vertical-align:-.125em;width:var(--fa-width,1.25em)}
.svg-inline--fa.fa-lg{vertical-align:-.2em}
.fa-lg{font-size:1.25em;line-height:.05em}
.fa-fw{text-align:center;width:1.25em}
"""


def _trim_theme_css(css_file: Path, used: set[str]) -> None:
    """Drop the glyph rules of Font Awesome icons no page uses from the theme's stylesheet."""
    css = css_file.read_text(encoding="utf-8")
    if "ffnbook.staticsite" in css:
        return  # already trimmed (an incremental build did not copy it again)
    keep = used | FA_RUNTIME

    def glyph(m: re.Match) -> str:
        return m.group(0) if m.group(1) in keep else ""

    css = re.sub(r'\.fa-([a-z0-9-]+)\{--fa:"[^"]*"\}', glyph, css)
    css = re.sub(r'\.fa-([a-z0-9-]+):?:before\{content:"[^"]*"\}', glyph, css)
    css = css.replace("/*# sourceMappingURL=pydata-sphinx-theme.css.map*/", "")
    css_file.write_text(css + SVG_ICON_CSS, encoding="utf-8")


def _subset_icon_fonts(webfonts: Path, css: str) -> None:
    """Cut Font Awesome's web fonts (115 KiB for all 1,400 solid icons) down to the glyphs
    the theme's stylesheet still names, e.g. the admonition icons drawn with ``content:``."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    # Named as escapes ("\\f0eb") or as the characters themselves, in the private use area.
    codepoints = {int(h, 16) for h in re.findall(r"\\([0-9a-fA-F]{4})", css)}
    codepoints |= {ord(c) for c in css}
    codepoints = {c for c in codepoints if 0xE000 <= c <= 0xF8FF}
    for path in sorted(webfonts.glob("fa-*.woff2")):
        # recalcTimestamp=False: no build time in the font, so two builds give the same bytes.
        font = TTFont(path, recalcTimestamp=False)
        options = subset.Options()
        options.flavor = "woff2"
        options.notdef_outline = True
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=codepoints)
        subsetter.subset(font)
        font.flavor = "woff2"
        font.save(path, reorderTables=True)


# --- page rewrites ------------------------------------------------------------------------

SEARCH_SCRIPTS = re.compile(
    r'\s*<script src="(?:[^"]*/)?'
    r'(?:_static/searchtools\.js|_static/language_data\.js|searchindex\.js)"></script>'
)
PRELOAD = re.compile(r'\s*<link rel="preload" as="script" href="[^"]*" />')
FONTAWESOME_JS = re.compile(r'\s*<script defer src="[^"]*scripts/fontawesome\.js[^"]*"></script>')
DEFERRABLE = ("doctools.js", "sphinx_highlight.js", "sphinx-book-theme.js", "design-tabs.js")
DOC_OPTIONS = re.compile(r'<script src="[^"]*_static/documentation_options\.js[^"]*"></script>')


def rewrite_page(text: str, name: str, icons: dict, used: set, missing: set,
                 doc_options: str | None, base: str | None) -> str:
    def swap(m: re.Match) -> str:
        svg = _icon_svg(m.group(2), m.group(3), icons, missing)
        return m.group(0) if svg is None else svg

    text = FA_TAG.sub(swap, text)
    used.update(re.findall(r'<svg class="svg-inline--fa [^"]*"[^>]* data-icon="([a-z0-9-]+)"',
                           text))
    text = FONTAWESOME_JS.sub("", text)
    text = PRELOAD.sub("", text)
    if name != "search.html":
        text = SEARCH_SCRIPTS.sub("", text)
        for script in DEFERRABLE:
            text = re.sub(r'<script (data-[^>]*)?src="([^"]*' + re.escape(script) + r'[^"]*)"',
                          lambda m: f'<script defer {m.group(1) or ""}src="{m.group(2)}"', text)
        if doc_options is not None:
            text = DOC_OPTIONS.sub(lambda m: f"<script>{doc_options}</script>", text)
    # sphinx-design's stylesheet and tab script only on pages with a card, dropdown or tab.
    if not re.search(r'class="(?:[^"]* )?sd-', text):
        text = re.sub(r'\s*<link rel="stylesheet" type="text/css" '
                      r'href="[^"]*sphinx-design\.min\.css[^"]*" />', "", text)
        text = re.sub(r'\s*<script [^>]*src="[^"]*design-tabs\.js[^"]*"></script>', "", text)
    # The launch menu's logos are hidden until the menu opens: fetch them only then.
    text = re.sub(r'<img (alt="[^"]*" src="[^"]*_static/images/logo_[a-z]+\.(?:png|svg)")>',
                  r'<img loading="lazy" \1>', text)
    # Accessibility: a button's accessible name must contain its visible text ("Search Ctrl+K").
    text = text.replace(
        '<button class="btn search-button-field search-button__button pst-js-only" title="Search" '
        'aria-label="Search" ',
        '<button class="btn search-button-field search-button__button pst-js-only" title="Search" ')
    # The primary sidebar (site title, search, contents) is a landmark of its own.
    text = text.replace('<div id="pst-primary-sidebar" class="bd-sidebar-primary bd-sidebar">',
                        '<div id="pst-primary-sidebar" class="bd-sidebar-primary bd-sidebar" '
                        'role="complementary" aria-label="Book navigation">')
    # Folded cells: the visible "Show code cell source" is the name; no contradicting label.
    text = text.replace('<summary aria-label="Toggle hidden content">', "<summary>")
    # The bibliography is a list; doc-biblioentry is deprecated and not a list item.
    text = text.replace('role="doc-biblioentry"', 'role="listitem"')
    if base is not None and "<base " not in text:
        text = text.replace("<head>", f'<head>\n<base href="{base}" />', 1)
    return text


def _site_url(app: Sphinx) -> str:
    url = app.config.ffnbook_site_url
    return url if url.endswith("/") else url + "/"


def finish(app: Sphinx, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    theme_js = out / "_static" / "scripts" / "fontawesome.js"
    icons = _fontawesome_icons(theme_js) if theme_js.exists() else {}
    options_js = out / "_static" / "documentation_options.js"
    doc_options = options_js.read_text(encoding="utf-8").strip() if options_js.exists() else None
    if doc_options is not None and "</" in doc_options:
        doc_options = None
    used: set[str] = set()
    missing: set[str] = set()
    base_path = urlparse(_site_url(app)).path or "/"
    for page in sorted(out.rglob("*.html")):
        if "_static" in page.relative_to(out).parts:
            continue
        name = page.relative_to(out).as_posix()
        original = page.read_text(encoding="utf-8")
        text = rewrite_page(original, name, icons, used, missing, doc_options,
                            base_path if name == "404.html" else None)
        if text != original:
            page.write_text(text, encoding="utf-8")
    for classes in sorted(missing):
        logger.warning("staticsite: no Font Awesome icon for class=%r in the theme's script",
                       classes)
    css = out / "_static" / "styles" / "pydata-sphinx-theme.css"
    if css.exists():
        _trim_theme_css(css, used)
        webfonts = out / "_static" / "vendor" / "fontawesome" / "webfonts"
        if webfonts.is_dir():
            _subset_icon_fonts(webfonts, css.read_text(encoding="utf-8"))
    _number_notebook_cells(out / "_sources")
    write_sitemap(app, out)


def _number_notebook_cells(sources: Path) -> None:
    """Downloadable notebooks get random cell ids each time a page becomes a notebook;
    number them instead, so two builds of a page offer the same download."""
    for path in sorted(sources.glob("*.ipynb")):
        original = path.read_text(encoding="utf-8")
        notebook = json.loads(original)
        for i, cell in enumerate(notebook.get("cells", [])):
            if "id" in cell:
                cell["id"] = f"cell-{i}"
        text = json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"
        if text != original:
            path.write_text(text, encoding="utf-8")


def write_sitemap(app: Sphinx, out: Path) -> None:
    """sitemap.xml (every content page, in a stable order) and robots.txt pointing at it."""
    base = _site_url(app)
    pages = sorted(d for d in app.env.found_docs
                   if d not in NOT_IN_SITEMAP and not app.env.metadata.get(d, {}).get("orphan"))
    urls = "".join(f"  <url><loc>{html.escape(base + app.builder.get_target_uri(d))}</loc></url>\n"
                   for d in pages)
    (out / "sitemap.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' + urls + "</urlset>\n",
        encoding="utf-8")
    (out / "robots.txt").write_text(f"User-agent: *\nAllow: /\n\nSitemap: {base}sitemap.xml\n",
                                    encoding="utf-8")


def setup(app: Sphinx) -> dict:
    app.add_config_value("ffnbook_site_url", "https://example.org/", "html", types=[str])
    app.connect("html-page-context", add_meta_description)
    app.connect("build-finished", finish)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
