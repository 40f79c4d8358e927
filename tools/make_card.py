"""Draw the social card (docs/_static/ffnbook-card.png) that link previews show.

    .venv/bin/python tools/make_card.py

1200 x 630 pixels, the size Open Graph and most link previews use. The card is
a source file, committed, so a build neither draws it nor depends on fonts: run
this again only to change it. Drawn with matplotlib's bundled DejaVu Sans and no
metadata, so the same matplotlib writes the same bytes.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "docs" / "_static" / "ffnbook-card.png"
WIDTH, HEIGHT, DPI = 1200, 630, 100
INK, PAPER, ACCENT = "#1b2733", "#ffffff", "#0a58ca"


def box(ax, x, width, label, fill):
    ax.add_patch(
        FancyBboxPatch(
            (x, 0.14),
            width,
            0.2,
            boxstyle="round,pad=0.01,rounding_size=0.02",
            facecolor=fill,
            edgecolor=INK,
            linewidth=2,
        )
    )
    ax.text(x + width / 2, 0.24, label, ha="center", va="center", fontsize=22, color=INK)


def main() -> None:
    fig = plt.figure(figsize=(WIDTH / DPI, HEIGHT / DPI), dpi=DPI, facecolor=PAPER)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.axis("off")
    ax.add_patch(plt.Rectangle((0, 0.94), 1, 0.06, color=ACCENT))
    ax.text(0.06, 0.77, "The Transformer", fontsize=54, fontweight="bold", color=INK, va="center")
    ax.text(0.06, 0.62, "Feed-Forward Network", fontsize=54, fontweight="bold", color=INK, va="center")
    ax.text(
        0.06,
        0.47,
        "An executable handbook chapter: every number and figure is computed",
        fontsize=21,
        color=INK,
        va="center",
    )
    # The FFN's three steps, as the chapter's anatomy section names them.
    steps = [("expand", "#dbe7fb"), ("activate", "#fde7c8"), ("compress", "#d8f0dc")]
    x = 0.06
    for i, (label, fill) in enumerate(steps):
        box(ax, x, 0.2, label, fill)
        if i < len(steps) - 1:
            ax.add_patch(
                FancyArrowPatch(
                    (x + 0.205, 0.24), (x + 0.265, 0.24), arrowstyle="-|>", mutation_scale=24, color=INK, linewidth=2
                )
            )
        x += 0.27
    fig.savefig(OUT, dpi=DPI, facecolor=PAPER, metadata={"Software": None})
    plt.close(fig)
    print(f"wrote {OUT.relative_to(Path.cwd()) if OUT.is_relative_to(Path.cwd()) else OUT}")


if __name__ == "__main__":
    main()
