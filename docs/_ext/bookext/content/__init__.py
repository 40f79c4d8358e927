"""What the pages say beyond Markdown: the book's roles, directives and node transforms.

* :mod:`bookext.content.mathml` -- LaTeX rendered to MathML at build time (no script, no CDN).
* :mod:`bookext.content.glossary` -- the glossary page, from ``docs/glossary.yml``
  (:mod:`bookext.content.glossary_data` reads and checks that file).
* :mod:`bookext.content.glossary_terms` -- ``{gls}`` terms in prose, with their definition as a tooltip.
* :mod:`bookext.content.selfcheck` -- multiple-choice self-checks whose every option explains itself
  (:mod:`bookext.content.quiz_order`: the seeded order of their options).
* :mod:`bookext.content.html_element` -- the HTML node the tooltips, self-checks and problems are
  made of.
* :mod:`bookext.content.figurealt` -- alt text of glued figures from the figure functions themselves.
* :mod:`bookext.content.citations` -- author–year citations that never print the same text twice.
* :mod:`bookext.content.explorables` -- interactive figures computed in the browser, no kernel.
* :mod:`bookext.content.problems` -- numeric problems checked against the answers the build
  computed (:mod:`bookext.content.problem_text`: the words the page, the notebook and the PDF share).
* :mod:`bookext.content.numbers` -- glued numbers in the book's format (no "0.00e+00").
* :mod:`bookext.content.chapter_pdf` -- the role that links the chapter's PDF, where there is one.
* :mod:`bookext.content.listings` -- listings of ffnbook's code without API markup, methods in
  their class.
"""

from __future__ import annotations

from sphinx.application import Sphinx

PARTS = (
    "mathml",
    "glossary",
    "glossary_terms",
    "selfcheck",
    "figurealt",
    "citations",
    "explorables",
    "problems",
    "numbers",
    "listings",
    "chapter_pdf",
)


def setup(app: Sphinx) -> dict:
    for part in PARTS:
        app.setup_extension(f"bookext.content.{part}")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
