"""How wide the FFN is: the 4x convention, the 8/3 rule of gated FFNs, LLaMA's rounding.

The widths of real models come from the fact sheet through
:mod:`ffnbook.models`; this module only computes with them.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from ._checks import (
    describe,
    require_bool,
    require_instance,
    require_number,
    require_positive_int,
    require_positive_number,
    require_sequence,
)
from .model_parameters import ffn_share_of_blocks
from .models import get_model, load_models
from .parameters import equal_parameter_width, ffn_weights_in_d2
from .plotting import FFN_COLOUR, GATED_HATCH, BookFigure, new_figure, styled

#: The classic FFN's width, as a multiple of d_model (Vaswani et al., 2017).
CLASSIC_RATIO = 4


def llama_ffn_width(d_model: int, multiple_of: int = 256, ffn_dim_multiplier: float | None = None) -> int:
    """Hidden width of a LLaMA-family SwiGLU FFN, by the rule in Meta's released code.

    Start from the classic ``4·d_model``, take two-thirds of it (truncating, as
    ``int`` does), optionally scale by ``ffn_dim_multiplier`` (truncating
    again), then round *up* to a multiple of ``multiple_of``.

    Parameters
    ----------
    d_model:
        Model width.
    multiple_of:
        The width is rounded up to a multiple of this (256 in LLaMA-1).
    ffn_dim_multiplier:
        Extra scale applied before rounding (``None`` in LLaMA-1; 1.3 in the
        larger later models).

    Examples
    --------
    >>> llama_ffn_width(4096)  # LLaMA-1 7B
    11008
    >>> llama_ffn_width(8192, multiple_of=4096, ffn_dim_multiplier=1.3)  # Llama-2 70B
    28672
    >>> llama_ffn_width(4096, multiple_of=1024, ffn_dim_multiplier=1.3)  # Llama-3 8B
    14336
    """
    d_model = require_positive_int(d_model, "d_model")
    multiple_of = require_positive_int(multiple_of, "multiple_of")
    hidden = _two_thirds_of_classic(d_model)
    if ffn_dim_multiplier is not None:
        require_number(ffn_dim_multiplier, "ffn_dim_multiplier", low=0, low_open=True,
                       expected="a positive finite number or None")
        hidden = int(ffn_dim_multiplier * hidden)
        if hidden < 1:
            raise ValueError(f"ffn_dim_multiplier={ffn_dim_multiplier!r} scales two-thirds of 4·d_model "
                             f"(d_model={d_model}) below one unit")
    if hidden < 1:
        raise ValueError(f"d_model={d_model} is too small: two-thirds of 4·d_model truncates to {hidden} units")
    return multiple_of * ((hidden + multiple_of - 1) // multiple_of)


def _two_thirds_of_classic(d_model: int) -> int:
    """Meta's first step: two-thirds of the classic width, truncated as ``int`` does."""
    return int(equal_parameter_width(CLASSIC_RATIO * d_model))


class LlamaWidthSetting(NamedTuple):
    """The inputs of :func:`llama_ffn_width` for one released model, and how sure we are."""

    model: str  #: name in the fact sheet
    d_model: int
    multiple_of: int
    ffn_dim_multiplier: float | None
    mark: str  #: P (primary file seen) or S (quoted by third parties only)


def llama_settings() -> tuple[LlamaWidthSetting, ...]:
    """Released settings of the rule, for the models whose ``ffn_width_rule`` the sheet gives.

    Also available as ``LLAMA_SETTINGS``, read from the sheet on first use (so
    importing this module never reads it).
    """
    return tuple(LlamaWidthSetting(m.name, m.d_model, *m.ffn_width_rule) for m in load_models() if m.ffn_width_rule)


def __getattr__(name: str):
    if name == "LLAMA_SETTINGS":
        return llama_settings()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def llama_width_rows(settings=None) -> list[dict]:
    """The rule's width for each released setting (:func:`llama_settings` by default), next to the sheet's ``d_ff``.

    Each row also carries the intermediate steps: two-thirds of ``4·d_model``
    and the value after the multiplier, before rounding.
    """
    settings = llama_settings() if settings is None else require_sequence(
        settings, "settings", expected="a list of LlamaWidthSetting",
        item=lambda s, label: require_instance(s, label, LlamaWidthSetting))
    known = {m.name for m in load_models()}
    for i, s in enumerate(settings):
        if s.model not in known:
            raise ValueError(f"settings[{i}] names {s.model!r}, which is not a model of the sheet")
    rows = []
    for s in settings:
        two_thirds = _two_thirds_of_classic(s.d_model)
        scaled = two_thirds if s.ffn_dim_multiplier is None else int(s.ffn_dim_multiplier * two_thirds)
        width = llama_ffn_width(s.d_model, s.multiple_of, s.ffn_dim_multiplier)
        sheet = get_model(s.model).d_ff
        rows.append(
            {
                "model": s.model,
                "d_model": s.d_model,
                "multiple_of": s.multiple_of,
                "multiplier": "none" if s.ffn_dim_multiplier is None else f"{s.ffn_dim_multiplier:g}",
                "two_thirds": two_thirds,
                "scaled": scaled,
                "d_ff_rule": width,
                "d_ff_sheet": sheet,
                "matches": width == sheet,
                "mark": s.mark,
            }
        )
    return rows


def llama_width_table(settings=None):
    """:func:`llama_width_rows` as a table for a page."""
    from .display import MarkdownTable

    return MarkdownTable(
        llama_width_rows(settings),
        [
            ("model", "model", str),
            ("d_model", "d_model", ",d"),
            ("int(8·d_model/3)", "two_thirds", ",d"),
            ("multiplier", "multiplier", str),
            ("after multiplier", "scaled", ",d"),
            ("multiple_of", "multiple_of", ",d"),
            ("d_ff by the rule", "d_ff_rule", ",d"),
            ("d_ff in the sheet", "d_ff_sheet", ",d"),
            ("setting", "mark", lambda m: {"P": "primary", "S": "secondary"}[m]),
        ],
    )


def width_rows(include_moe: bool = False) -> list[dict]:
    """``d_ff / d_model`` of every model in the fact sheet, in the sheet's order.

    Dense models only unless ``include_moe``; for MoE models the FFN of one
    expert is used. ``gated`` marks three-matrix (GLU-style) FFNs, and
    ``matrices_in_d2`` is the FFN's weight count in units of ``d_model²``
    (2 or 3 matrices times the ratio).
    """
    include_moe = require_bool(include_moe, "include_moe")
    rows = []
    for m in load_models():
        if m.is_moe and not include_moe:
            continue
        d_ff = m.d_ff if m.is_moe else m.d_ff_dense
        rows.append(
            {
                "model": m.name,
                "year": m.year,
                "d_model": m.d_model,
                "d_ff": d_ff,
                "ratio": d_ff / m.d_model,
                "ffn_type": m.ffn_type,
                "ffn_label": m.ffn_type_label,
                "gated": m.gated,
                "matrices_in_d2": ffn_weights_in_d2(d_ff, m.d_model, m.gated),
            }
        )
    return rows


def width_table(include_moe: bool = False):
    """:func:`width_rows` as a table for a page."""
    from .display import MarkdownTable

    return MarkdownTable(
        width_rows(include_moe),
        [
            ("model", "model", str),
            ("d_model", "d_model", ",d"),
            ("d_ff", "d_ff", ",d"),
            ("d_ff / d_model", "ratio", ".3f"),
            ("FFN", "ffn_label", "s"),
            ("FFN weights / d_model²", "matrices_in_d2", ".2f"),
        ],
    )


def width_counts(rows=None) -> dict:
    """How many dense models of the sheet have a classic or a gated FFN, and where they sit.

    Keys (plain ints): ``models``, ``classic``, ``classic_at_4`` (ratio exactly
    four), ``gated``, ``gated_below_4``, ``gated_at_4``.

    >>> c = width_counts([{"gated": False, "ratio": 4.0}, {"gated": True, "ratio": 8 / 3}])
    >>> c["classic_at_4"], c["gated_below_4"]
    (1, 1)
    """
    rows = width_rows() if rows is None else require_sequence(
        rows, "rows", expected="a list of width_rows() rows", item=_width_row)
    classic = [r for r in rows if not r["gated"]]
    gated = [r for r in rows if r["gated"]]
    return {
        "models": len(rows),
        "classic": len(classic),
        "classic_at_4": sum(r["ratio"] == CLASSIC_RATIO for r in classic),
        "gated": len(gated),
        "gated_below_4": sum(r["ratio"] < CLASSIC_RATIO for r in gated),
        "gated_at_4": sum(r["ratio"] == CLASSIC_RATIO for r in gated),
    }


def _width_row(row, label: str) -> dict:
    if not isinstance(row, dict) or not {"gated", "ratio"} <= row.keys():
        raise TypeError(f"{label} must be a dict with keys 'gated' and 'ratio', got {describe(row)}")
    require_bool(row["gated"], f"{label}['gated']")
    require_positive_number(row["ratio"], f"{label}['ratio']")
    return row


def excess_over_classic_budget(d_ff: int, d_model: int, gated: bool = True,
                               classic_multiple: float = CLASSIC_RATIO) -> float:
    """How much larger an FFN is than a classic one of width ``classic_multiple·d_model``.

    The classic FFN holds ``2·classic_multiple`` units of ``d_model²`` (8 at the
    usual 4x); the result is this FFN's units over that, minus one, so 0 means
    "the same budget" and 0.31 means "31% more weights".

    >>> excess_over_classic_budget(2048, 768)  # T5 v1.1: exactly the budget
    0.0
    >>> excess_over_classic_budget(11008, 4096) == 3 * 11008 / (8 * 4096) - 1  # LLaMA-1 7B
    True
    """
    require_positive_number(classic_multiple, "classic_multiple")
    return ffn_weights_in_d2(d_ff, d_model, gated) / (2 * classic_multiple) - 1


def d_model_at_fixed_budget(params_per_layer: float, ffn_ratio: float, attn_ratio: float = 1.0) -> float:
    """The model width that keeps a block's weights at ``params_per_layer`` for a given FFN ratio.

    Kaplan et al. count a block's non-embedding weights as
    ``2·d_model·(2·d_attn + d_ff)``; with ``d_ff = ffn_ratio·d_model`` and
    ``d_attn = attn_ratio·d_model`` that is ``2·(2·attn_ratio + ffn_ratio)·d_model²``,
    solved here for ``d_model``. Widening the FFN at a fixed budget narrows the
    model: this is how they varied ``d_ff`` while holding the size fixed.

    >>> d_model_at_fixed_budget(12 * 768**2, 4.0)  # the standard shape: 12·d_model² per block
    768.0
    """
    for value, name in ((params_per_layer, "params_per_layer"), (ffn_ratio, "ffn_ratio"),
                        (attn_ratio, "attn_ratio")):
        require_positive_number(value, name)
    return float(math.sqrt(params_per_layer / (2 * (2 * attn_ratio + ffn_ratio))))


def fixed_budget_rows(params_per_layer: float, ffn_ratios=(1.0, 2.0, 4.0, 8.0, 16.0)) -> list[dict]:
    """:func:`d_model_at_fixed_budget` for several FFN ratios, with the resulting ``d_ff``.

    Each row: ``ratio``, ``d_model``, ``d_ff`` (floats; a real model would
    round them) and the FFN's share of the block's weights,
    ``ratio / (2 + ratio)``.

    >>> [round(r["ffn_share"], 4) for r in fixed_budget_rows(12 * 768**2, (4.0,))]
    [0.6667]
    """
    ffn_ratios = require_sequence(ffn_ratios, "ffn_ratios", item=require_positive_number)
    require_positive_number(params_per_layer, "params_per_layer")
    rows = []
    for ratio in ffn_ratios:
        d_model = d_model_at_fixed_budget(params_per_layer, float(ratio))
        rows.append({"ratio": float(ratio), "d_model": d_model, "d_ff": float(ratio) * d_model,
                     "ffn_share": ffn_share_of_blocks(float(ratio))})
    return rows


def fixed_budget_table(params_per_layer: float, ffn_ratios=(1.0, 2.0, 4.0, 8.0, 16.0)):
    """:func:`fixed_budget_rows` as a table for a page."""
    from .display import MarkdownTable

    return MarkdownTable(
        fixed_budget_rows(params_per_layer, ffn_ratios),
        [
            ("d_ff / d_model", "ratio", "g"),
            ("d_model at the budget", "d_model", ",.0f"),
            ("d_ff at the budget", "d_ff", ",.0f"),
            ("FFN share of the block", "ffn_share", ".1%"),
        ],
    )


def gated_budget(d_model: int, classic_multiple: float = CLASSIC_RATIO) -> dict:
    """Weights of a classic two-matrix FFN against a gated three-matrix one of 2/3 the width.

    A gated FFN with width ``(2/3)·m·d_model`` has three matrices, so
    ``3·(2/3)·m = 2·m`` units of ``d_model²``: the same as two matrices of width
    ``m·d_model``. Returns both counts (exact, before any rounding of the
    width) and the gated width.

    >>> b = gated_budget(768)
    >>> b["classic"] == b["gated"], b["gated_width"]
    (True, 2048.0)
    """
    d_model = require_positive_int(d_model, "d_model")
    require_positive_number(classic_multiple, "classic_multiple")
    classic_width = classic_multiple * d_model
    gated_width = equal_parameter_width(classic_width)
    return {
        "classic_width": float(classic_width),
        "gated_width": float(gated_width),
        "classic": float(2 * d_model * classic_width),
        "gated": float(3 * d_model * gated_width),
    }


@styled
def width_figure() -> BookFigure:
    """Bars of ``d_ff / d_model`` for the dense models of the sheet, gated FFNs marked.

    Dashed reference lines at 4 (the classic width) and 8/3 (the width at
    which three matrices cost what two matrices of width 4 cost).
    """
    rows = width_rows()
    fig = new_figure(7.5, 0.4 * len(rows) + 1.5)
    ax = fig.add_subplot()
    y = list(range(len(rows)))[::-1]
    colours = [FFN_COLOUR for r in rows]  # every bar is an FFN; hatching marks the gated ones
    hatches = [GATED_HATCH if r["gated"] else "" for r in rows]
    bars = ax.barh(y, [r["ratio"] for r in rows], color=colours, height=0.65, edgecolor="white")
    for bar, hatch in zip(bars, hatches):
        bar.set_hatch(hatch)
    for yi, r in zip(y, rows):
        ax.text(r["ratio"] + 0.05, yi, f"{r['ratio']:.2f}", va="center", fontsize=9)
    for x, label in ((CLASSIC_RATIO, "4"), (equal_parameter_width(CLASSIC_RATIO), "8/3")):
        ax.axvline(x, color="#222222", linestyle="--", linewidth=1)
        ax.text(x, len(rows) - 0.45, f" {label}", fontsize=9, va="bottom")
    ax.set_yticks(y, [r["model"] for r in rows])
    ax.set_xlim(0, 4.9)
    ax.set_ylim(-0.6, len(rows) + 0.2)
    ax.set_xlabel("FFN width over model width, d_ff / d_model (ratio)")
    ax.grid(axis="y", visible=False)
    from matplotlib.patches import Patch

    ax.legend(
        handles=[
            Patch(facecolor=FFN_COLOUR, label="classic, two matrices"),
            Patch(facecolor=FFN_COLOUR, hatch=GATED_HATCH, edgecolor="white", label="gated, three matrices"),
        ],
        loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, fontsize=9,
    )
    return BookFigure(fig, _width_alt(rows))


def _width_alt(rows) -> str:
    """The width figure's alt text, from the same rows the bars are drawn from."""
    counts = width_counts(rows)

    def listed(selected):
        return "; ".join(f"{r['model']} {r['ratio']:.2f}" for r in selected)

    classic = [r for r in rows if not r["gated"]]
    gated = [r for r in rows if r["gated"]]
    return (
        f"Horizontal bar chart of d_ff divided by d_model for {counts['models']} dense models, "
        f"with dashed lines at 4 and at 8/3. {counts['classic']} models have a classic two-matrix FFN "
        f"(solid bars), {counts['classic_at_4']} of them exactly at 4: {listed(classic)}. "
        f"{counts['gated']} have a gated three-matrix FFN (hatched bars), "
        f"{counts['gated_below_4']} of them below 4: {listed(gated)}."
    )
