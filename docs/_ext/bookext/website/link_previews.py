"""Link previews: Open Graph and Twitter-card metadata on every page.

Its title, its meta description (:mod:`bookext.website.meta_description`), its address
and the book's card image (``docs/_static/ffnbook-card.png``, drawn by
``tools/make_card.py``), all on the site's own address (``ffnbook_site_url``). Metadata
only: a reader's browser fetches nothing for it. The 404 page, served at any missing
address, has none.

Why not sphinxext-opengraph (tried: 0.13.0, on tests/roots/test-theme with ``ogp_site_url``
and ``ogp_image`` set): it keeps to the site's constraints (metadata only, nothing fetched,
no script) but says something else. Its ``og:description`` is the page's first 200
characters of text, headings included ("A page of prose with no code. A section: Its
heading gives..."), not the page's meta description (its learning goals), and no setting
hands it one; ``og:type`` is one value for the whole site (here: ``website`` for the home
page, ``article`` for the others); it writes nothing on pages without a doctree (search,
index), no image size for a configured ``ogp_image``, and names the card by the site's name
unless ``ogp_image_alt`` is set (without ``ogp_image`` it draws a card per page with
Matplotlib). Matching the previews this module writes would take its configuration plus a
field list on every page; this module is forty lines.
"""

from __future__ import annotations

import html
import re

from sphinx.application import Sphinx

from bookext.website.meta_tags import append_meta_tags, meta_tag
from bookext.website.site_url import site_url

CARD = "ffnbook-card.png"  # in docs/_static
CARD_SIZE = (1200, 630)
CARD_ALT = "The Transformer Feed-Forward Network: expand, activate, compress."


def add_link_previews(app: Sphinx, pagename, templatename, context, doctree) -> None:
    if pagename == "404":
        return
    site = site_url(app)
    title = html.unescape(re.sub(r"<[^>]+>", "", context.get("title") or app.config.project))
    described = re.search(r'<meta name="description" content="([^"]*)"', context.get("metatags", ""))
    tags = [
        meta_tag("og:type", "website" if pagename == app.config.root_doc else "article"),
        meta_tag("og:site_name", app.config.project),
        meta_tag("og:title", title),
        meta_tag("og:url", site + app.builder.get_target_uri(pagename)),
        meta_tag("og:image", f"{site}_static/{CARD}"),
        meta_tag("og:image:width", str(CARD_SIZE[0])),
        meta_tag("og:image:height", str(CARD_SIZE[1])),
        meta_tag("og:image:alt", CARD_ALT),
        meta_tag("twitter:card", "summary_large_image", "name"),
    ]
    if described:
        tags.append(meta_tag("og:description", html.unescape(described.group(1))))
    append_meta_tags(context, tags)


def setup(app: Sphinx) -> dict:
    app.setup_extension("bookext.website.site_url")
    # After the meta description (priority 500), which it reuses, and the policy's tag.
    app.connect("html-page-context", add_link_previews, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
