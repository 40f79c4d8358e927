# A tiny book for what bookext.website's page parts do to every page through hooks: the meta
# description, scripts and stylesheets per page, accessible markup (node overrides),
# the 404 page's <base>, the sitemap (tests/test_ext_pages.py). Pages are not executed.
from bookext.website import PAGE_PARTS

project = "Tiny book"
extensions = [
    "myst_nb",
    "sphinx_design",
    *(f"bookext.website.{part}" for part in PAGE_PARTS),
]
myst_enable_extensions = ["colon_fence"]
nb_execution_mode = "off"
ffnbook_site_url = "https://example.org/book"
exclude_patterns = ["_build"]
# Named here, not left to the extensions: several tiny books build in one test process,
# and Sphinx's default source_suffix dict would carry one book's parsers into the next.
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb"}
