"""Alt text of glued figures, written by the code that draws them.

A figure function of ffnbook returns a ``BookFigure`` whose plain-text form is
its alt text, built from the same values it plots. A ``{glue:figure}`` without
an ``:alt:`` option takes that text, so a changed result can never leave a
stale number in the alt text. An explicit ``:alt:`` still wins. A glued figure
that has neither fails the build (a warning, and ``-W`` makes it an error),
naming the page and the key.
"""

from __future__ import annotations

from myst_nb.ext.glue.directives import PasteFigureDirective
from myst_nb.ext.glue.utils import RetrievalError, retrieve_glue_data
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)


class GlueFigureWithAlt(PasteFigureDirective):
    """``{glue:figure}`` whose missing ``:alt:`` is the glued figure's own text."""

    def run(self):
        if "alt" not in self.options:
            try:
                data = retrieve_glue_data(self.document, self.arguments[0])
            except RetrievalError:
                return super().run()  # myst-nb reports the missing key itself
            text = " ".join(str(data.data.get("text/plain", "")).split())
            if not text or text.startswith("<"):
                logger.warning(
                    "glued figure %r has no :alt: option and no alt text of its own "
                    "(a BookFigure's description); give one or the other",
                    self.arguments[0],
                    location=(self.env.docname, self.lineno),
                    type="bookext",
                    subtype="figure-alt",
                )
            else:
                self.options["alt"] = text
        return super().run()


def setup(app: Sphinx) -> dict:
    app.add_directive_to_domain("glue", "figure", GlueFigureWithAlt, override=True)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
