# A tiny book for the problem directive (tests/test_ext_problems.py): notebooks saved with
# their outputs (glue included), read without executing them.
extensions = ["myst_nb", "bookext.content.problems"]
myst_enable_extensions = ["colon_fence", "dollarmath"]
nb_execution_mode = "off"
exclude_patterns = ["_build"]
# Named here, not left to the extensions: several tiny books build in one test process,
# and Sphinx's default source_suffix dict would carry one book's parsers into the next.
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
