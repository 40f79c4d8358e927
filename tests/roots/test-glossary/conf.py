# A tiny book for the glossary role, tooltips and page (tests/test_ext_glossary.py);
# its glossary is glossary.yml here, which the tests put in place of docs/glossary.yml.
extensions = ["myst_parser", "bookext.content.mathml", "bookext.content.glossary_terms", "bookext.content.glossary"]
myst_enable_extensions = ["dollarmath"]
html_math_renderer = "mathml"
exclude_patterns = ["_build"]
# Named here, not left to the extensions: several tiny books build in one test process,
# and Sphinx's default source_suffix dict would carry one book's parsers into the next.
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
