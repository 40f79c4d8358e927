# A tiny book for MathML math and its warning on a formula it cannot convert
# (tests/test_ext_mathml.py).
extensions = ["myst_parser", "bookext.content.mathml"]
myst_enable_extensions = ["dollarmath", "amsmath"]
html_math_renderer = "mathml"
exclude_patterns = ["_build"]
# Named here, not left to the extensions: several tiny books build in one test process,
# and Sphinx's default source_suffix dict would carry one book's parsers into the next.
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
