# A tiny book for the self-check directive and its error messages (tests/test_ext_selfcheck.py).
extensions = ["myst_parser", "bookext.content.selfcheck"]
exclude_patterns = ["_build"]
# Named here, not left to the extensions: several tiny books build in one test process,
# and Sphinx's default source_suffix dict would carry one book's parsers into the next.
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
