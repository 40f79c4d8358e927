# The book's theme, theme options and template overrides (read from the book's conf.py)
# on a tiny book, with the parts of bookext that touch the theme (tests/test_ext_theme.py).
# Pages are not executed.
import runpy
from pathlib import Path

import bookext
from bookext.website import PAGE_PARTS

ROOT = Path(bookext.__file__).resolve().parents[3]
book = runpy.run_path(str(ROOT / "conf.py"))

project = "Tiny book"
extensions = [
    "myst_nb",
    "bookext.website.reading_tools",
    "bookext.content.glossary_terms",
    "bookext.content.selfcheck",
    *(f"bookext.website.{part}" for part in PAGE_PARTS),
    "bookext.notebooks.downloads",
    "bookext.website.postprocess",
    "bookext.website.header_buttons",
    "bookext.website.security_policy",
    "bookext.website.link_previews",
    "bookext.content.chapter_pdf",
]
nb_execution_mode = "off"
html_theme = book["html_theme"]
html_theme_options = book["html_theme_options"]
html_context = book["html_context"]
html_sourcelink_suffix = book["html_sourcelink_suffix"]
templates_path = [str(ROOT / path) for path in book["templates_path"]]
html_static_path = [str(ROOT / path) for path in book["html_static_path"]]
exclude_patterns = ["_build", "_changed_templates"]
# Named here, not left to the extensions: several tiny books build in one test process,
# and Sphinx's default source_suffix dict would carry one book's parsers into the next.
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb"}
