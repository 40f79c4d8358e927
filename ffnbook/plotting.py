"""Figures for the book: matplotlib drawn to deterministic, self-contained SVG.

Pages never call pyplot. A figure function in ffnbook builds a
:class:`matplotlib.figure.Figure` with :func:`new_figure`, draws on it, and
returns :class:`BookFigure`, which Jupyter and myst-nb display as SVG. A page
then glues it::

    fig = ffnbook.some_module.some_figure(...)
    glue("key", fig, display=False)

and places it with ``{glue:figure}`` and a caption and ``:alt:`` text. Because no
pyplot figure is ever opened, nothing is displayed twice.

Because every figure is a bare :class:`~matplotlib.figure.Figure` saved to
SVG, no matplotlib backend is involved: importing this module leaves the
backend a reader's notebook chose (inline, widget, a GUI window) as it was.

The SVG is deterministic (fixed hash salt, no date) so two builds give the same
bytes; text stays text (``svg.fonttype = "none"``), which keeps files small and
readable by screen readers and search. Figures have an opaque white
background and dark ink so they stay legible in the light and the dark theme.
"""

from __future__ import annotations

import io

import matplotlib
from matplotlib.figure import Figure

#: Colour-blind-safe palette (Okabe & Ito), dark enough for text contrast on white.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
#: The FFN's colour in every figure (orange means nothing else).
FFN_COLOUR = PALETTE[1]
#: Attention's colour in every figure (blue means nothing else).
ATTENTION_COLOUR = PALETTE[0]
#: Colours for every other distinction, such as activations, methods, models, or before and
#: after, from another family than orange and blue (green, reddish purple, black and grey);
#: where more lines are needed, line styles and markers tell them apart.
OTHER_COLOURS = (PALETTE[2], PALETTE[3], PALETTE[6], "#808080")
#: The one hatching pattern, which marks a gated FFN (three matrices).
GATED_HATCH = "//"

_RC = {
    "svg.hashsalt": "ffnbook",
    "svg.fonttype": "none",
    "font.size": 11,
    "axes.titlesize": 12,
    "axes.labelsize": 11,
    "axes.edgecolor": "#222222",
    "axes.labelcolor": "#111111",
    "axes.grid": True,
    "grid.color": "#dddddd",
    "xtick.color": "#222222",
    "ytick.color": "#222222",
    "text.color": "#111111",
    "legend.frameon": False,
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
}


#: The largest figure side, in inches (a page is about 7 wide).
MAX_INCHES = 100


def new_figure(width: float = 7.0, height: float = 4.0, **subplot_kw) -> Figure:
    """A blank figure with the book's style, not attached to pyplot; ``width`` and ``height`` in inches."""
    from ._checks import require_number

    for value, name in ((width, "width"), (height, "height")):
        require_number(value, name, low=0, high=MAX_INCHES, low_open=True,
                       expected=f"a size in inches in (0, {MAX_INCHES}]")
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(width, height), layout="constrained")
    fig._ffnbook_rc = dict(_RC)  # remembered for drawing and saving
    return fig


class BookFigure:
    """A finished figure; displays as SVG, and as its description in plain text.

    ``description`` is the figure's alt text: what a reader who cannot see it
    needs, written by the figure function from the same values it plots. Its
    plain-text form (``repr``) is exactly that text, so a page's
    ``{glue:figure}`` without an ``:alt:`` option uses it (the book's
    ``bookext.figurealt``), and no number in the alt text is ever typed by hand.
    """

    def __init__(self, figure: Figure, description: str):
        if not isinstance(figure, Figure):
            raise TypeError(f"figure must be a matplotlib Figure, got {type(figure).__name__}")
        if not isinstance(description, str):
            raise TypeError(f"description must be text (the alt text), got {type(description).__name__}")
        if not description.strip():
            raise ValueError("description must be a non-empty text: a BookFigure needs its alt text")
        self.figure = figure
        self.description = description

    def to_svg(self) -> str:
        buffer = io.StringIO()
        with matplotlib.rc_context(getattr(self.figure, "_ffnbook_rc", _RC)):
            self.figure.savefig(buffer, format="svg", metadata={"Date": None}, facecolor="white")
        return buffer.getvalue()

    def _repr_svg_(self) -> str:
        return self.to_svg()

    @property
    def alt(self) -> str:
        """The alt text (the same as ``description``)."""
        return self.description

    def __repr__(self) -> str:
        return self.description


def styled(fn):
    """Decorator: run a figure-drawing function inside the book's rc context."""
    import functools

    if not callable(fn):
        raise TypeError(f"fn must be a function to decorate, got {type(fn).__name__}")

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with matplotlib.rc_context(_RC):
            return fn(*args, **kwargs)

    return wrapper
