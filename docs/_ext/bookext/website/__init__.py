"""The site as a reader gets it: light, offline, accessible, findable pages and their tools.

* :mod:`bookext.website.site_url` -- the address the site is published at (``ffnbook_site_url``).
* :mod:`bookext.website.page_assets` -- each page loads only what it uses, nothing render-blocking
  but CSS; :mod:`bookext.website.stylesheet_bundles` joins its stylesheets into one file.
* :mod:`bookext.website.accessible_markup` -- markup axe-core flags, made accessible through hooks.
* :mod:`bookext.website.meta_description` -- every page's meta description.
* :mod:`bookext.website.search_snippets` -- search results' snippets from a page's article alone.
* :mod:`bookext.website.sitemap` -- ``sitemap.xml`` and ``robots.txt``.
* :mod:`bookext.website.notfound` -- the 404 page's links, at any missing address.
* :mod:`bookext.website.security_policy` -- nothing from another host, no inline script but the
  page's own: the content security policy and its script hashes.
* :mod:`bookext.website.link_previews` -- Open Graph and Twitter-card metadata (:mod:`bookext.website.meta_tags`
  writes the tags).
* :mod:`bookext.website.header_buttons` -- the header's repository menu, with icons the theme knows.
* :mod:`bookext.website.postprocess` -- the few edits of the finished HTML no hook can make, each
  checked.
* :mod:`bookext.website.reading_tools` -- the article header's reading tools, the script behind
  them, the tooltips and self-checks, and the book's stylesheet.
* :mod:`bookext.website.previews` -- hover and focus previews of figures, equations, sections,
  citations.
* :mod:`bookext.website.mathfont` -- the site's own math font, cut to what the book uses.
* :mod:`bookext.website.copycode` -- a Copy button on every code cell.
* :mod:`bookext.website.navigation` -- the sidebar toggles' keyboard focus; section links close the
  drawer.
* :mod:`bookext.website.figurelinks` -- a tap or click on a figure opens its SVG full size.
* :mod:`bookext.website.phonefigures` -- on a narrow screen a figure shows its drawing for a phone.

The theme's templates the book overrides are in ``docs/_templates/``.
"""

from __future__ import annotations

from sphinx.application import Sphinx

#: What every page is given through hooks (description, assets, markup, 404 base, sitemap, search
#: text); the test books of tests/roots load exactly these.
PAGE_PARTS = ("search_snippets", "meta_description", "notfound", "accessible_markup", "page_assets", "sitemap")

PARTS = (
    "mathfont",
    "reading_tools",
    *PAGE_PARTS,
    "postprocess",
    "header_buttons",
    "security_policy",
    "link_previews",
    "previews",
    "copycode",
    "navigation",
    "figurelinks",
    "phonefigures",
)


def setup(app: Sphinx) -> dict:
    for part in PARTS:
        app.setup_extension(f"bookext.website.{part}")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
