# A tiny book for the reference previews (tests/test_ext_previews.py): a page whose text
# refers to a figure, an equation and a section of another page, one in a subfolder
# doing the same, and a page with no references at all.
extensions = ["myst_parser", "bookext.website.previews"]
myst_enable_extensions = ["colon_fence", "dollarmath", "amsmath"]
numfig = True
exclude_patterns = ["_build"]
# Named here, not left to the extensions: several tiny books build in one test process,
# and Sphinx's default source_suffix dict would carry one book's parsers into the next.
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
# The book's theme: its pages have the <article> whose links get previews.
html_theme = "sphinx_book_theme"
