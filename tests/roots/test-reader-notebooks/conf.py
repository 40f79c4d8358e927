# A tiny book for the reader notebooks (tests/test_ext_reader_notebooks.py): one notebook page
# saved with its outputs (glue included), read without executing it, so it has no execution
# record (the notebook then installs torch, and the build says why).
extensions = ["myst_nb", "bookext.website.site_url", "bookext.notebooks.reader_notebooks"]
myst_enable_extensions = ["colon_fence", "dollarmath", "amsmath"]
nb_execution_mode = "off"
numfig = True
html_title = "Tiny book"
ffnbook_site_url = "https://example.org/book/"
ffnbook_package_ref = "0123456789abcdef0123456789abcdef01234567"
exclude_patterns = ["_build"]
# Named here, not left to the extensions: several tiny books build in one test process,
# and Sphinx's default source_suffix dict would carry one book's parsers into the next.
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
# Where a reader's pip installs ffnbook from (the launch buttons' repository).
html_theme_options = {"repository_url": "https://github.com/example/tiny"}
