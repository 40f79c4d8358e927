# A tiny book for what bookext.website's page parts do to every page through hooks: the meta
# description, scripts and stylesheets per page, accessible markup (node overrides),
# the 404 page's <base>, the sitemap (tests/test_ext_pages.py). Pages are not executed.
project = "Tiny book"
extensions = [
    "myst_nb",
    "sphinx_design",
    "bookext.website.meta_description",
    "bookext.website.page_assets",
    "bookext.website.accessible_markup",
    "bookext.website.notfound",
    "bookext.website.sitemap",
    "bookext.website.search_snippets",
]
myst_enable_extensions = ["colon_fence"]
nb_execution_mode = "off"
ffnbook_site_url = "https://example.org/book"
exclude_patterns = ["_build"]
# Named here, not left to the extensions: several tiny books build in one test process,
# and Sphinx's default source_suffix dict would carry one book's parsers into the next.
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb"}
