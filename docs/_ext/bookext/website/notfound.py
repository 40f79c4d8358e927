"""The 404 page, served at any missing address: links that work from there.

A static host (GitHub Pages, the test server) serves ``404.html`` at whatever address was
missing, ``/ffnbook/a/b/c`` as well as ``/ffnbook/x``. The page gets a ``<base>`` (the path
of ``ffnbook_site_url``), before every other address in its head, so its relative links
resolve from the site's root. Under that ``<base>``, an in-page link (``#main-content``,
the skip link) would mean the home page: a small script points such links at the address
being shown (its hash is in the page's policy, :mod:`bookext.website.security_policy`).

Why not sphinx-notfound-page (tried: 1.1.0, on tests/roots/test-theme with
``notfound_urls_prefix = "/book/"``): it rewrites the addresses the templates make
(``pathto``, ``toctree``, stylesheets, scripts) and images into absolute ones under one
prefix, but not the page's own references: the 404 page's "Start from the contents" link
stayed ``href="index.html"``, which without this module's ``<base>`` (what adopting it would
remove) points, at a deeper missing address, at a page that does not exist. It needs the
same published path this module's ``<base>`` needs, so it is no more position-independent;
it replaces the builder's ``css_tag``/``js_tag`` with its own (through private
``sphinx.builders.html._assets`` names) and forces the page orphan through an environment
collector. The ``<base>`` covers every relative address, body included.
"""

from __future__ import annotations

import html
from urllib.parse import urlparse

from sphinx.application import Sphinx

from bookext.website.site_url import site_url

NOT_FOUND_PAGE = "404"

# Under 404.html's <base>, "#main-content" resolves to the site's home page; point
# every in-page link at the address actually shown instead.
IN_PAGE_LINKS_SCRIPT = (
    "<script>document.addEventListener('DOMContentLoaded',function(){"
    "document.querySelectorAll('a[href^=\"#\"]').forEach(function(a){"
    "a.setAttribute('href',location.pathname+location.search+a.getAttribute('href'));});});"
    "</script>"
)


def add_404_base(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """A ``<base>``, before every other address in the 404 page's head."""
    if pagename == NOT_FOUND_PAGE:
        base = urlparse(site_url(app)).path or "/"
        context["metatags"] = f'<base href="{html.escape(base)}" />\n' + context.get("metatags", "")


def keep_in_page_links_on_the_address(app: Sphinx, pagename, templatename, context, doctree) -> None:
    if pagename == NOT_FOUND_PAGE:
        context["metatags"] = context.get("metatags", "") + "\n" + IN_PAGE_LINKS_SCRIPT


def setup(app: Sphinx) -> dict:
    app.setup_extension("bookext.website.site_url")
    app.connect("html-page-context", add_404_base)
    # After the policy's tag (priority 600): the head lists the policy, then the script it allows.
    app.connect("html-page-context", keep_in_page_links_on_the_address, priority=650)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
