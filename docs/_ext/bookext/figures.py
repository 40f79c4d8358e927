"""Figure alt text computed with the figure: ``{glue:figure}`` with an ``:alt-key:`` option.

A figure's alt text often states what the figure measured ("every bar lies
between 47% and 53%"). Typed into the page, such numbers would go stale when
the code changes; the ``:alt:`` option is plain text and cannot hold a glue
role. This part adds one option to myst-nb's ``glue:figure`` directive::

    :::{glue:figure} an_hidden_figure
    :alt-key: an_hidden_figure_alt
    :name: fig-anatomy-hidden

    The caption.
    :::

``alt-key`` names a glued Python string (the figure function returns it with
the figure); its value becomes the image's alt text. A missing key, a value
that is not a string, or both ``:alt:`` and ``:alt-key:`` is a build warning,
so ``make html`` (``-W``) fails and names the page.
"""

from __future__ import annotations

import ast

from myst_nb.ext.glue.directives import PasteFigureDirective
from myst_nb.ext.glue.utils import RetrievalError, retrieve_glue_data
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)


def glued_string(data: dict, key: str) -> str:
    """The Python string a cell glued, from its ``text/plain`` representation.

    >>> glued_string({"text/plain": "'Two panels.'"}, "k")
    'Two panels.'
    >>> glued_string({"text/plain": "0.5"}, "k")
    Traceback (most recent call last):
    ...
    ValueError: glue key 'k' holds 0.5, not a string; glue the alt text as a str
    """
    text = data.get("text/plain", "")
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        value = None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"glue key {key!r} holds {text}, not a string; glue the alt text as a str")
    return value


class GlueFigureWithAltKey(PasteFigureDirective):
    """myst-nb's ``glue:figure``, plus ``:alt-key:`` for alt text glued as a string."""

    option_spec = {**PasteFigureDirective.option_spec, "alt-key": lambda arg: arg.strip()}

    def run(self):
        key = self.options.pop("alt-key", None)
        if key is not None:
            location = (self.state.document.settings.env.docname, self.lineno)
            if "alt" in self.options:
                logger.warning("glue:figure has both :alt: and :alt-key:; keep one", location=location)
            try:
                data = retrieve_glue_data(self.state.document, key).data
                self.options["alt"] = glued_string(data, key)
            except (RetrievalError, ValueError) as exc:
                logger.warning(f"glue:figure alt text: {exc}", location=location)
        return super().run()


def setup(app: Sphinx) -> dict:
    app.add_directive_to_domain("glue", "figure", GlueFigureWithAltKey, override=True)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
