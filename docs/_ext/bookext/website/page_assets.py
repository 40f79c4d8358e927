"""Each page loads only what it uses, and nothing render-blocking but CSS.

Through the hook Sphinx provides for it (``html-page-context``, editing the page's
``script_files`` and ``css_files``, as ``sphinx.ext.mathjax`` adds its script only to pages
with math): every script with a file is deferred; ``documentation_options.js`` is written
into the page, since the theme's inline scripts that follow it read
``DOCUMENTATION_OPTIONS`` at once; sphinx-design's stylesheet and tab script only on pages
with a card, dropdown or tab; the page's stylesheets after the theme's come as one file
(:mod:`bookext.website.stylesheet_bundles`), one request instead of up to six before the
first paint on a phone's connection. The search page keeps Sphinx's order, as its search
scripts expect. Template overrides in ``docs/_templates/`` drop the rest: the search index
on every page (``layout.html``), fontawesome.js and script preloads
(``static/webpack-macros.html``).
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx

from bookext.website.stylesheet_bundles import bundle_stylesheets

DOCUMENTATION_OPTIONS = "_static/documentation_options.js"


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


def setup(app: Sphinx) -> dict:
    app.setup_extension("bookext.website.stylesheet_bundles")
    # Last, after the themes and extensions have added their files for the page.
    app.connect("html-page-context", load_only_what_the_page_uses, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
