"""A book figure drawn for a phone (ffnbook.plotting): narrower, panels stacked, text no
smaller than a phone can read, carried in the figure's display metadata; the figure
itself is left as it was."""

from __future__ import annotations

import re

import IPython.core.formatters
import pytest

from ffnbook.figure_metadata import PHONE_METADATA
from ffnbook.plotting import PHONE_INCHES, PHONE_MIN_POINTS, BookFigure, new_figure, styled


@styled
def panels(n: int, small_text: float = 8.0) -> BookFigure:
    """``n`` panels side by side sharing y, small text, a figure legend: a wide desktop figure."""
    fig = new_figure(3.5 * n, 3.6)
    axes = fig.subplots(1, n, sharey=True)
    for i, ax in enumerate(axes):
        ax.plot([0, 1, 2], [1, 3000, 20], label=f"line {i}")
        ax.set_yscale("log")  # ticks 10^0 ... 10^3: superscripts
        ax.set_title(f"Panel {i}: a title that is long enough to need wrapping on a phone")
        ax.set_xlabel(r"width $d_{\mathrm{ff}}$")  # a subscript
        ax.text(0.5, 1.5, "note", fontsize=small_text)
    fig.legend(loc="outside lower center", ncol=n)
    return BookFigure(fig, "Test panels.")


def svg_size(svg: str) -> tuple[float, float]:
    width, height = re.search(r'width="([\d.]+)pt" height="([\d.]+)pt"', svg).groups()
    return float(width), float(height)


def font_sizes(svg: str) -> list[float]:
    return [float(size) for size in re.findall(r"font-size: ([\d.]+)px", svg)]


def test_the_phone_drawing_is_phone_wide_with_text_a_phone_can_read():
    figure = panels(3)
    desktop, phone = figure.to_svg(), figure.to_phone_svg()
    assert svg_size(desktop)[0] == pytest.approx(3 * 3.5 * 72)
    assert svg_size(phone)[0] == pytest.approx(PHONE_INCHES * 72)
    assert min(font_sizes(desktop)) < 8.5  # the note, the scripts
    # Every text but a subscript is PHONE_MIN_POINTS or more; a log axis's numbers have no
    # superscript there (1, 10, 100, 1k).
    assert sorted(set(font_sizes(phone)))[1] >= PHONE_MIN_POINTS
    assert ">1k<" in phone and ">1k<" not in desktop
    # Shown 342 CSS px wide (a 390 px phone's column), its smallest text, a subscript's, is at
    # least 11 CSS px.
    assert min(font_sizes(phone)) * 342 / svg_size(phone)[0] >= 11


def test_side_by_side_panels_are_stacked_with_their_own_labels_and_restored_after():
    from ffnbook.plotting import _drawn_for_a_phone

    figure = panels(3)
    figure.to_svg()
    fig = figure.figure
    before = [b for ax in fig.axes for b in ax.get_position().bounds]
    with _drawn_for_a_phone(fig):
        fig.draw_without_rendering()
        boxes = [ax.get_position() for ax in fig.axes]
        assert len({round(b.x0, 3) for b in boxes}) == 1  # one column
        assert [b.y0 for b in boxes] == sorted((b.y0 for b in boxes), reverse=True)  # top to bottom in order
        # The shared y axis shows its numbers on every stacked panel, not only the first.
        assert all(any(t.get_visible() and t.get_text() for t in ax.get_yticklabels()) for ax in fig.axes)
    fig.draw_without_rendering()
    # Back in a row (constrained layout starts from where the axes were: a few thousandths apart).
    assert [b for ax in fig.axes for b in ax.get_position().bounds] == pytest.approx(before, abs=0.005)
    assert tuple(fig.get_size_inches()) == pytest.approx((10.5, 3.6))


def test_the_display_carries_the_desktop_drawing_first_and_the_phone_drawing_in_its_metadata():
    data, metadata = IPython.core.formatters.format_display_data(panels(2))
    assert set(data) == {"image/svg+xml", "text/plain"} and data["text/plain"] == "Test panels."
    assert svg_size(data["image/svg+xml"])[0] == pytest.approx(7 * 72)
    # The desktop drawing is the one a figure displayed alone gives: the phone's changed nothing.
    assert data["image/svg+xml"] == panels(2).to_svg()
    assert svg_size(metadata[PHONE_METADATA])[0] == pytest.approx(PHONE_INCHES * 72)


def test_a_legend_moves_below_the_figure_and_long_category_names_wrap_on_a_phone():
    from ffnbook.plotting import PHONE_LABEL_CHARS, _drawn_for_a_phone

    @styled
    def bars() -> BookFigure:
        fig = new_figure(7.5, 4.0)
        ax = fig.add_subplot()
        names = ["Transformer base (Vaswani et al.)", "GPT-2 small", "Llama-2 70B"]
        ax.barh(range(3), [4, 4, 3.5], label="classic, two matrices")
        ax.set_yticks(range(3), labels=names)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2)
        return BookFigure(fig, "Bars.")

    figure = bars()
    fig, ax = figure.figure, figure.figure.axes[0]
    with _drawn_for_a_phone(fig):
        fig.draw_without_rendering()
        assert not ax.get_legend().get_visible() and len(fig.legends) == 1
        shown = [t.get_text() for t in ax.get_yticklabels()]
        assert all(len(line) <= PHONE_LABEL_CHARS for label in shown for line in label.split("\n")), shown
        assert shown[0] == "Transformer base\n(Vaswani et al.)"
    fig.draw_without_rendering()
    assert ax.get_legend().get_visible() and fig.legends == []
    assert ax.get_yticklabels()[0].get_text() == "Transformer base (Vaswani et al.)"


def test_numbers_that_would_touch_on_a_phone_keep_every_second_tick():
    import numpy as np
    from matplotlib.ticker import FuncFormatter

    @styled
    def positions() -> BookFigure:
        fig = new_figure(7.0, 4.0)
        ax = fig.add_subplot()
        ax.plot(2.0 ** np.arange(18), np.arange(18))
        ax.set_xscale("log", base=2)
        ax.set_xticks(4.0 ** np.arange(9))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
        return BookFigure(fig, "Positions.")

    figure = positions()
    numbers = ("1", "4", "16", "64", "256", "1,024", "4,096", "16,384", "65,536")

    def shown(svg):
        return [n for n in numbers if f">{n}</text>" in svg]

    assert shown(figure.to_svg()) == list(numbers)
    assert shown(figure.to_phone_svg()) == list(numbers[::2])  # 65,536 and 16,384 would touch
    assert shown(figure.to_svg()) == list(numbers)  # and back
