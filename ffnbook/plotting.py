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

A figure drawn for a page's column (about 7 inches) shrinks to half its size on a
phone, and its text with it (9 to 11 points became 5 to 8 CSS px at 390 px). So a
:class:`BookFigure` also draws itself for a phone (:meth:`BookFigure.to_phone_svg`):
:data:`PHONE_INCHES` wide, panels side by side stacked into one column, no text under
:data:`PHONE_MIN_POINTS`, long titles wrapped. Its display carries both; the book
shows the phone's drawing on narrow screens (:data:`ffnbook.figure_metadata.PHONE_METADATA`).
"""

from __future__ import annotations

import io
import re
from contextlib import contextmanager
from functools import cache
from textwrap import fill
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # matplotlib is imported when a figure is drawn (~0.5 s), not with the package
    from matplotlib.figure import Figure

from .figure_metadata import PHONE_METADATA

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

#: The book's matplotlib settings (rcParams), completed on first use by :func:`_book_rc`.
_RC_SETTINGS = {
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
}


@cache
def _book_rc() -> dict:
    import matplotlib

    return {**_RC_SETTINGS, "axes.prop_cycle": matplotlib.cycler(color=PALETTE)}


def _rc_context(rc: dict | None = None):
    import matplotlib

    return matplotlib.rc_context(_book_rc() if rc is None else rc)


def _is_figure(value) -> bool:
    from matplotlib.figure import Figure

    return isinstance(value, Figure)


#: The largest figure side, in inches (a page is about 7 wide).
MAX_INCHES = 100


def new_figure(width: float = 7.0, height: float = 4.0, **subplot_kw) -> Figure:
    """A blank figure with the book's style, not attached to pyplot; ``width`` and ``height`` in inches."""
    from ._checks import require_number

    for value, name in ((width, "width"), (height, "height")):
        require_number(value, name, low=0, high=MAX_INCHES, low_open=True,
                       expected=f"a size in inches in (0, {MAX_INCHES}]")
    from matplotlib.figure import Figure

    with _rc_context():
        fig = Figure(figsize=(width, height), layout="constrained")
    fig._ffnbook_rc = dict(_book_rc())  # remembered for drawing and saving
    return fig


#: The width of a figure drawn for a phone, in inches. A 390 px phone shows it 342 CSS px
#: wide, about its natural size (1 pt is then 1.32 CSS px).
PHONE_INCHES = 3.6
#: The smallest text of a figure drawn for a phone, in points (11.9 CSS px in a 342 px column).
PHONE_MIN_POINTS = 9.0
#: The factor a phone's text sizes are the desktop's times, never under PHONE_MIN_POINTS. The
#: figure is half as wide, so its labels keep their order of size and most of their room.
PHONE_TEXT_SCALE = 0.85
#: A phone panel is at most this tall, in inches (a stacked column of them stays scrollable).
PHONE_PANEL_MAX = 3.4
#: A category name longer than this many characters is written on two or more lines on a phone.
PHONE_LABEL_CHARS = 18


#: Mathtext draws sub- and superscripts this much smaller than their text (matplotlib's
#: mathtext SHRINK_FACTOR): a label with d_ff's subscript is drawn larger on a phone.
SCRIPT_SCALE = 0.7


#: The smallest text with a sub- or superscript on a phone, in points (its script is then
#: 8.4 pt, 11.1 CSS px in a 342 px column).
PHONE_MIN_SCRIPTED_POINTS = 12.0


def _phone_points(size: float, scripted: bool = False) -> float:
    smallest = PHONE_MIN_SCRIPTED_POINTS if scripted else PHONE_MIN_POINTS
    return max(smallest, round(size * PHONE_TEXT_SCALE * 2) / 2)


#: The chapter's symbols as figure text writes them in words (d_ff), and as mathtext
#: draws them in the pages' notation (d with an upright subscript ff).
NOTATION = {"d_ff": r"$d_{\mathrm{ff}}$", "d_model": r"$d_{\mathrm{model}}$"}
_SYMBOL = re.compile(r"(?<![\w$])(" + "|".join(NOTATION) + r")(?![\w$])")


def in_the_chapters_notation(fig: Figure) -> None:
    r"""Every text of ``fig`` (titles, axis labels, legends, annotations) with the chapter's
    symbols in its notation: ``d_ff`` as :math:`d_{\mathrm{ff}}`. A text that already holds
    mathtext is left as it is.

    >>> fig = new_figure(); ax = fig.add_subplot(); _ = ax.set_xlabel("hidden width d_ff (units)")
    >>> in_the_chapters_notation(fig); ax.get_xlabel()
    'hidden width $d_{\\mathrm{ff}}$ (units)'
    """
    from matplotlib.text import Text

    if not _is_figure(fig):
        raise TypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    for text in fig.findobj(Text):
        words = text.get_text()
        if "$" not in words and _SYMBOL.search(words):
            text.set_text(_SYMBOL.sub(lambda m: NOTATION[m.group(1)], words))


def _has_scripts(text: str) -> bool:
    """Whether mathtext draws part of ``text`` as a sub- or superscript."""
    return text.count("$") >= 2 and any(c in text.split("$", 1)[1] for c in "_^")


def _plain_power(value: float, _position=None) -> str:
    """A tick of a log axis without a superscript (10^4 -> 10k): a phone's exponent would be
    too small to read."""
    if value <= 0:
        return ""
    for limit, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if value >= limit:
            return f"{value / limit:g}{suffix}"
    return f"{value:g}"


def _stacked(axes: list) -> tuple[int, int, dict]:
    """Rows and columns of the figure's grid, and each axes' subplot spec in a grid of one
    column (row by row, left to right), or {} where the grid is not one cell per axes."""
    specs = {ax: ax.get_subplotspec() for ax in axes}
    grids = {spec.get_gridspec() for spec in specs.values()}
    if len(grids) != 1:
        return 1, 1, {}
    grid = grids.pop()
    rows, cols = grid.get_geometry()
    if cols == 1 or any(spec.num1 != spec.num2 for spec in specs.values()):
        return rows, cols, {}
    column = grid.figure.add_gridspec(rows * cols, 1)
    return rows, cols, {ax: column[spec.num1, 0] for ax, spec in specs.items()}


def _colorbars(fig: Figure) -> list[dict]:
    """Each colorbar of ``fig`` as what :meth:`Figure.colorbar` needs to draw it again."""
    bars = []
    for cax in fig.axes:
        bar, info = getattr(cax, "_colorbar", None), getattr(cax, "_colorbar_info", None)
        if bar is None or info is None:
            continue
        axis = cax.yaxis if bar.orientation == "vertical" else cax.xaxis
        bars.append({"bar": bar, "mappable": bar.mappable, "ax": info["parents"], "location": info["location"],
                     "shrink": info["shrink"], "aspect": info["aspect"], "fraction": info["fraction"],
                     "pad": info["pad"], "label": axis.get_label().get_text(),
                     "size": axis.get_label().get_fontsize()})
    return bars


def _draw_colorbars_again(fig: Figure, bars: list[dict], phone: bool) -> None:
    """Remove the colorbars and draw them again, for a phone or as they were: constrained
    layout keeps no room for the labels of axes moved to another grid while their colorbars
    stay (matplotlib 3.11), so a colorbar is drawn anew for the axes where they now are."""
    for spec in bars:
        spec["bar"].remove()
        bar = fig.colorbar(spec["mappable"], ax=spec["ax"], location=spec["location"], shrink=spec["shrink"],
                           aspect=spec["aspect"], fraction=spec["fraction"], pad=spec["pad"])
        bar.set_label(spec["label"], fontsize=_phone_points(spec["size"]) if phone else spec["size"])
        if phone:
            bar.ax.tick_params(labelsize=PHONE_MIN_POINTS)
        spec["bar"] = bar


def _one_legend_below(fig: Figure, inside: list):
    """The legends inside panels hidden (at a phone's size one covers the data) and one legend
    below the figure holding each of their entries once; that legend, or None."""
    entries = {}
    for legend in inside:
        legend.set_visible(False)
        for handle, label in zip(legend.legend_handles, legend.get_texts()):
            entries.setdefault(label.get_text(), (handle, label.get_fontsize()))
    if not entries:
        return None
    size = _phone_points(min(s for _, s in entries.values()), any(map(_has_scripts, entries)))
    wide = max(map(len, entries)) > PHONE_LABEL_CHARS
    return fig.legend([h for h, _ in entries.values()], list(entries), loc="outside lower center",
                      ncols=1 if wide else 2, fontsize=size)


def _thin_crowded_ticks(fig: Figure, axes: list) -> dict:
    """Every second (third...) tick of an x axis whose numbers would touch at a phone's size;
    the axes' locators as they were."""
    from matplotlib.ticker import FixedLocator

    fig.draw_without_rendering()
    thinned = {}
    for axis in axes:
        if axis.axis_name != "x":
            continue
        low, high = sorted(axis.get_view_interval())
        ticks = [t for t in axis.get_majorticklocs() if low <= t <= high]
        for step in (1, 2, 3, 4):
            labels = [t for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]
            boxes = sorted((b.x0, b.x1) for b in (t.get_window_extent() for t in labels))
            if all(right + 2 < left for (_, right), (left, _) in zip(boxes, boxes[1:])):
                break
            thinned.setdefault(axis, axis.get_major_locator())
            axis.set_major_locator(FixedLocator(ticks[:: step + 1]))
            fig.draw_without_rendering()
    return thinned


@contextmanager
def _drawn_for_a_phone(fig: Figure):
    """The figure laid out for a phone for the duration of the block, then as it was."""
    from matplotlib.text import Text
    from matplotlib.ticker import FixedFormatter, FixedLocator, FuncFormatter, LogFormatterSciNotation

    width, height = fig.get_size_inches()
    fig.draw_without_rendering()  # the tick labels exist from here on
    axes = [ax for ax in fig.axes if ax.get_subplotspec() is not None]
    tick_axes = [(axis, labels[0].get_fontsize()) for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
                 if (labels := [t for t in axis.get_ticklabels() if t.get_text()])]
    powers = {axis: axis.get_major_formatter() for axis, _ in tick_axes
              if isinstance(axis.get_major_formatter(), LogFormatterSciNotation)}
    tick_labels = {id(t) for axis, _ in tick_axes for t in axis.get_ticklabels()}
    texts = [(t, t.get_fontsize(), t.get_wrap()) for t in fig.findobj(Text)
             if t.get_text() and id(t) not in tick_labels]
    legends = [(lg, lg._ncols) for lg in fig.legends]
    inside = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None and ax.get_legend().get_visible()]
    # An axis of names (models, sublayers) some too long for a phone's line: (locator, formatter,
    # the ticks and their names as drawn).
    categories = {axis: (axis.get_major_locator(), axis.get_major_formatter(), list(axis.get_ticklocs()),
                         [t.get_text() for t in axis.get_ticklabels()])
                  for axis, _ in tick_axes if max(len(t.get_text()) for t in axis.get_ticklabels()) > PHONE_LABEL_CHARS}
    rows, cols, column = _stacked(axes)
    bars = _colorbars(fig) if column else []
    specs = {ax: ax.get_subplotspec() for ax in column}
    shown_left = {ax: ax.yaxis.get_tick_params().get("labelleft", True) for ax in column}
    try:
        for ax, spec in column.items():
            ax.set_subplotspec(spec)
            ax.tick_params(axis="y", labelleft=True)  # a shared axis's labels, hidden beside the first
        _draw_colorbars_again(fig, bars, phone=True)
        panel = height / rows * PHONE_INCHES / (width / cols) * 1.4
        panels = rows * cols if column else rows
        for axis, (_, _, ticks, names) in categories.items():  # long names on two or more lines
            axis.set_major_locator(FixedLocator(ticks))
            axis.set_major_formatter(FixedFormatter([fill(name, PHONE_LABEL_CHARS) for name in names]))
        # Room for every category's lines, at the phone's text size, and for the title and legend.
        # (the ticks are evenly spaced: every row as tall as the name with the most lines)
        lines = max((len(names) * max(fill(name, PHONE_LABEL_CHARS).count("\n") + 1 for name in names)
                     for _, _, _, names in categories.values()), default=0)
        tall = lines * (PHONE_MIN_POINTS + 0.5) * 1.4 / 72 + 1.8 if lines else 0
        fig.set_size_inches(PHONE_INCHES, max(min(panel, PHONE_PANEL_MAX) * panels if panels > 1 else panel, 2.6, tall))
        below = _one_legend_below(fig, inside)
        for text, size, _ in texts:
            text.set_fontsize(_phone_points(size, _has_scripts(text.get_text())))
            text.set_wrap(text.get_rotation() == 0)  # a long title; matplotlib wraps only level text well
        for axis in powers:
            axis.set_major_formatter(FuncFormatter(_plain_power))
        for axis, size in tick_axes:
            scripted = any(_has_scripts(t.get_text()) for t in axis.get_ticklabels()) and axis not in powers
            axis.set_tick_params(labelsize=_phone_points(size, scripted))
        for legend, ncols in legends:
            legend.set_ncols(min(ncols, 2))
        thinned = _thin_crowded_ticks(fig, [axis for axis, _ in tick_axes if axis not in categories])
        yield fig
    finally:
        for axis, locator in thinned.items():
            axis.set_major_locator(locator)
        if below is not None:
            below.remove()
        for legend in inside:
            legend.set_visible(True)
        for axis, (locator, formatter, _, _) in categories.items():
            axis.set_major_locator(locator)
            axis.set_major_formatter(formatter)
        for legend, ncols in legends:
            legend.set_ncols(ncols)
        for axis, size in tick_axes:
            axis.set_tick_params(labelsize=size)
        for axis, formatter in powers.items():
            axis.set_major_formatter(formatter)
        for text, size, wrap in texts:
            text.set_fontsize(size)
            text.set_wrap(wrap)
        for ax, spec in specs.items():
            ax.set_subplotspec(spec)
            ax.tick_params(axis="y", labelleft=shown_left[ax])
        _draw_colorbars_again(fig, bars, phone=False)
        fig.set_size_inches(width, height)


class BookFigure:
    """A finished figure; displays as SVG, and as its description in plain text.

    ``description`` is the figure's alt text: what a reader who cannot see it
    needs, written by the figure function from the same values it plots. Its
    plain-text form (``repr``) is exactly that text, so a page's
    ``{glue:figure}`` without an ``:alt:`` option uses it (the book's
    ``bookext.content.figurealt``), and no number in the alt text is ever typed by hand.
    """

    def __init__(self, figure: Figure, description: str):
        if not _is_figure(figure):
            raise TypeError(f"figure must be a matplotlib Figure, got {type(figure).__name__}")
        if not isinstance(description, str):
            raise TypeError(f"description must be text (the alt text), got {type(description).__name__}")
        if not description.strip():
            raise ValueError("description must be a non-empty text: a BookFigure needs its alt text")
        self.figure = figure
        self.description = description
        in_the_chapters_notation(figure)

    def to_svg(self) -> str:
        buffer = io.StringIO()
        with _rc_context(getattr(self.figure, "_ffnbook_rc", None)):
            self.figure.savefig(buffer, format="svg", metadata={"Date": None}, facecolor="white")
        return buffer.getvalue()

    def to_phone_svg(self) -> str:
        """The figure drawn for a phone: :data:`PHONE_INCHES` wide, side-by-side panels in
        one column, no text under :data:`PHONE_MIN_POINTS`; the figure is left as it was."""
        with _drawn_for_a_phone(self.figure):
            return self.to_svg()

    def _repr_svg_(self) -> str:
        return self.to_svg()

    def _repr_mimebundle_(self, include=None, exclude=None) -> tuple[dict, dict]:
        data = {"image/svg+xml": self.to_svg(), "text/plain": self.description}
        return data, {PHONE_METADATA: self.to_phone_svg()}

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
        with _rc_context():
            return fn(*args, **kwargs)

    return wrapper
