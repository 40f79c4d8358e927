"""FFN widths: LLaMA's rounding rule against the sheet, the 8/3 budget, the ratio table."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from ffnbook import width
from ffnbook.models import get_model, load_models


def rule_by_fractions(d_model, multiple_of, multiplier):
    """Meta's rule written independently: exact fractions, floor, then ceiling."""
    hidden = math.floor(Fraction(8 * d_model, 3))
    if multiplier is not None:
        hidden = math.floor(Fraction(str(multiplier)) * hidden)
    return multiple_of * math.ceil(Fraction(hidden, multiple_of))


@pytest.mark.parametrize("setting", width.LLAMA_SETTINGS, ids=lambda s: s.model)
def test_rule_reproduces_the_sheet(setting):
    # The sheet's d_ff values come from configs (LLaMA-1: HF default, Llama-3: params.json
    # via the rule, Llama-2-70B: an HF-format config in a third-party test file).
    got = width.llama_ffn_width(setting.d_model, setting.multiple_of, setting.ffn_dim_multiplier)
    assert got == get_model(setting.model).d_ff


def test_rule_gives_the_same_width_for_llama2_7b():
    assert width.llama_ffn_width(4096) == get_model("Llama-2 7B").d_ff


def test_mistral_width_equals_llama3_8b():
    assert get_model("Mistral 7B").d_ff == width.llama_ffn_width(4096, 1024, 1.3)


@pytest.mark.parametrize("d_model", [64, 512, 768, 1000, 4096, 5120, 8192, 12345])
@pytest.mark.parametrize("multiple_of, multiplier", [(256, None), (1024, 1.3), (4096, 1.3), (1, None), (7, 1.5)])
def test_rule_matches_exact_arithmetic(d_model, multiple_of, multiplier):
    assert width.llama_ffn_width(d_model, multiple_of, multiplier) == rule_by_fractions(
        d_model, multiple_of, multiplier
    )


@pytest.mark.parametrize("d_model", [512, 4096, 8192])
def test_rounding_is_up_and_by_less_than_one_step(d_model):
    raw = int(8 * d_model / 3)
    got = width.llama_ffn_width(d_model, 256)
    assert got % 256 == 0 and raw <= got < raw + 256


def test_llama_rows_all_match_and_carry_marks():
    rows = width.llama_width_rows()
    assert all(r["matches"] for r in rows)
    assert {r["model"]: r["mark"] for r in rows}["Llama-2 70B"] == "S"


def test_gated_budget_is_eight_d_squared():
    for d in (512, 768, 4096):
        b = width.gated_budget(d)
        assert b["classic"] == b["gated"] == 8 * d * d
        assert b["gated_width"] == pytest.approx(8 * d / 3)


def test_t5_v1_1_spends_exactly_the_v1_0_budget():
    # 2·768·3072 = 3·768·2048: T5 v1.1's GEGLU at 2048 equals v1.0's ReLU FFN at 3072.
    rows = {r["model"]: r for r in width.width_rows()}
    assert rows["T5-base v1.1"]["matrices_in_d2"] == rows["T5-base v1.0"]["matrices_in_d2"] == 8


def test_width_rows_cover_dense_models_only_by_default():
    dense = [m.name for m in load_models() if not m.is_moe]
    assert [r["model"] for r in width.width_rows()] == dense
    moe = {r["model"]: r for r in width.width_rows(include_moe=True)}
    assert moe["Mixtral 8x7B"]["ratio"] == 14336 / 4096


def test_classic_models_are_four_times_wider():
    for r in width.width_rows():
        if not r["gated"] and r["model"] != "PaLM 540B":
            assert r["ratio"] == 4.0


def test_width_figure_has_description():
    fig = width.width_figure()
    assert "GPT-2 small 4.00" in fig.description and "gated" in fig.description


@pytest.mark.parametrize("bad, error", [(0, ValueError), (2.5, TypeError), (True, TypeError)])
def test_bad_d_model(bad, error):
    with pytest.raises(error, match="d_model"):
        width.llama_ffn_width(bad)


@pytest.mark.parametrize("bad, error", [(-1.0, ValueError), ("1.3", TypeError), (float("nan"), ValueError)])
def test_bad_multiplier(bad, error):
    with pytest.raises(error, match="ffn_dim_multiplier"):
        width.llama_ffn_width(4096, 256, bad)


# --- counts, budgets and the fixed-size shapes of Kaplan et al. ------------------------------


def test_width_counts_by_hand():
    rows = [
        {"gated": False, "ratio": 4.0},
        {"gated": False, "ratio": 4.0},
        {"gated": True, "ratio": 4.0},
        {"gated": True, "ratio": 3.5},
        {"gated": True, "ratio": 8 / 3},
    ]
    assert width.width_counts(rows) == {
        "models": 5,
        "classic": 2,
        "classic_at_4": 2,
        "gated": 3,
        "gated_below_4": 2,
        "gated_at_4": 1,
    }


def test_width_counts_of_the_sheet():
    dense = [m for m in load_models() if not m.is_moe]
    c = width.width_counts()
    assert c["models"] == len(dense)
    assert c["classic"] == sum(not m.gated for m in dense)
    assert c["gated_at_4"] + c["gated_below_4"] == c["gated"]  # no gated model is wider than 4


def test_weights_in_d2_and_excess():
    # Llama-3 8B: 3 · 14336/4096 = 10.5 units, 10.5/8 - 1 = 31.25% over a classic 4x FFN.
    assert width.ffn_weights_in_d2(14336, 4096, gated=True) == 10.5
    assert width.excess_over_classic_budget(14336, 4096) == pytest.approx(0.3125)
    assert width.excess_over_classic_budget(3072, 768, gated=False) == 0.0
    # Against a classic FFN of width 2·d (4 units of d²), a gated one of width 1024 = 4/3·768 holds 4 units too.
    assert width.excess_over_classic_budget(1024, 768, gated=True, classic_multiple=2.0) == pytest.approx(0.0)
    with pytest.raises(ValueError, match="classic_multiple"):
        width.excess_over_classic_budget(1024, 768, classic_multiple=0)


def test_d_model_at_fixed_budget_solves_kaplans_count():
    budget = 12 * 768**2
    for ratio in (1.0, 2.5, 4.0, 16.0):
        d = width.d_model_at_fixed_budget(budget, ratio)
        # 2·d·(2·d_attn + d_ff) with d_attn = d, d_ff = ratio·d gives the budget back.
        assert 2 * d * (2 * d + ratio * d) == pytest.approx(budget)
    assert width.d_model_at_fixed_budget(budget, 4.0) == pytest.approx(768)
    with pytest.raises(ValueError, match="ffn_ratio"):
        width.d_model_at_fixed_budget(budget, -1.0)


def test_fixed_budget_rows_narrow_as_the_ffn_widens():
    rows = width.fixed_budget_rows(12 * 768**2, (1.0, 4.0, 16.0))
    assert [r["d_model"] for r in rows] == sorted((r["d_model"] for r in rows), reverse=True)
    assert rows[1]["ffn_share"] == pytest.approx(2 / 3)
    assert all(r["d_ff"] == pytest.approx(r["ratio"] * r["d_model"]) for r in rows)


def test_width_figure_alt_text_lists_every_model():
    fig = width.width_figure()
    assert repr(fig) == fig.alt == fig.description
    for r in width.width_rows():
        assert f"{r['model']} {r['ratio']:.2f}" in fig.alt


def test_sheet_contexts_and_windows():
    # Sources in models.csv: GPT-2 n_ctx 1024; GPT-3 §2.1 n_ctx 2048; Mistral Table 1 window 4096.
    assert get_model("GPT-2 small").context_length == 1024
    assert get_model("GPT-3 175B").context_length == 2048
    mistral = get_model("Mistral 7B")
    assert (mistral.context_length, mistral.attention_window, mistral.attention_span) == (8192, 4096, 4096)
    gpt3 = get_model("GPT-3 175B")
    assert gpt3.attention_window_known is False and gpt3.attention_span is None
    assert get_model("Transformer base (Vaswani et al.)").context_length is None
