"""The address the site is published at: ``ffnbook_site_url`` (``conf.py``).

The sitemap, the link previews and the 404 page's ``<base>`` are written from it, and a
reader notebook's links and images point at it. Pages never load anything from it: they
link one another by relative addresses, so the site works from any path.
"""

from __future__ import annotations

from sphinx.application import Sphinx


def site_url(app: Sphinx) -> str:
    """``ffnbook_site_url``, ending in ``/``."""
    url = app.config.ffnbook_site_url
    return url if url.endswith("/") else url + "/"


def setup(app: Sphinx) -> dict:
    app.add_config_value("ffnbook_site_url", "https://example.org/", "html", types=[str])
    return {"parallel_read_safe": True, "parallel_write_safe": True}
