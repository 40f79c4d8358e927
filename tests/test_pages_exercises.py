"""The built Exercises page: solutions folded, every glued number equal to a recomputation.

Each glued value is looked up by its key and compared with the same quantity
computed here, where possible from the algebra written out independently of ffnbook.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from sitecheck import cited_keys, glued, soup_of

import ffnbook
from ffnbook import nonlinearity, position_independence
from ffnbook.models import get_model

PAGE = "exercises"


def test_solutions_are_folded(site):
    soup = soup_of(site, PAGE)
    hidden_cells = soup.find_all("div", class_="tag_hide-cell")
    dropdowns = soup.find_all("details", class_="sd-dropdown")
    assert len(hidden_cells) == 7  # one code solution per exercise except the written one
    assert len(dropdowns) == 8  # one answer per exercise
    for cell in hidden_cells:
        toggle = cell.find("details")
        assert toggle is not None and not toggle.has_attr("open")
        assert "Show code cell" in toggle.find("summary").get_text()
    for box in dropdowns:
        assert not box.has_attr("open")
        assert box.find("summary").get_text(strip=True) in ("Answer", "A model answer")


def test_self_checks_come_before_the_summary(site):
    article = soup_of(site, PAGE).find("article")
    headings = [h.get_text(" ", strip=True) for h in article.find_all("h2")]
    titles = [h.split(". ", 1)[-1].rstrip("#").strip() for h in headings]
    # As on every chapter page, the numeric problems close the page, after its summary.
    assert titles.index("Check your understanding") < titles.index("Summary") == len(titles) - 2
    assert titles[-1] == "Problems"


def test_exercise_1_parameter_counts(site):
    d, h = 384, 6
    assert (glued(site, PAGE, "ex_p_d_model"), glued(site, PAGE, "ex_p_n_heads")) == (d, h)
    assert glued(site, PAGE, "ex_p_attn") == 4 * d * d
    for tag, d_ff in (("4x", 4 * d), ("other", 5 * d // 2)):
        ffn = 2 * d * d_ff + d_ff + d  # written out, not through ffnbook
        assert glued(site, PAGE, f"ex_p_d_ff_{tag}") == d_ff
        assert glued(site, PAGE, f"ex_p_multiplier_{tag}") == d_ff / d
        assert glued(site, PAGE, f"ex_p_ffn_{tag}") == ffn
        assert glued(site, PAGE, f"ex_p_units_{tag}") == 2 * d_ff / d
        assert glued(site, PAGE, f"ex_p_predicted_{tag}") == d_ff / (2 * d)
        assert glued(site, PAGE, f"ex_p_ratio_{tag}") == ffn / (4 * d * d)


def test_exercise_2_change_one_token(site):
    layer = ffnbook.ffn_layer(ffnbook.init_ffn_params(64, 256, seed=11), "gelu")
    x = ffnbook.random_tokens((6, 64), seed=12)
    edited, watched = glued(site, PAGE, "ex_ct_edited"), glued(site, PAGE, "ex_ct_watched")
    assert edited != watched
    moves = [position_independence.movement_by_position(layer, x, edited, seed=s) for s in range(5)]
    assert glued(site, PAGE, "ex_ct_seeds") == 5
    assert glued(site, PAGE, "ex_ct_token0") == 0.0 == max(m[watched] for m in moves)
    assert glued(site, PAGE, "ex_ct_token1") == pytest.approx(min(m[edited] for m in moves), rel=1e-9)
    assert glued(site, PAGE, "ex_ct_token1") > 0.01
    assert glued(site, PAGE, "ex_ct_others") == 0.0


def test_exercise_3_linear_collapse(site):
    params = ffnbook.init_ffn_params(64, 256, seed=3)
    samples = ffnbook.random_tokens((200, 64), seed=5)
    gelu_fit = nonlinearity.best_affine_fit(samples, ffnbook.ffn(samples, *params, activation="gelu"))
    assert glued(site, PAGE, "ex_lc_collapse_diff") < 1e-12  # torch: combined matrix against the two layers
    assert glued(site, PAGE, "ex_lc_samples") == 200
    assert glued(site, PAGE, "ex_lc_fit_identity") < 1e-12  # the activation-free FFN is affine
    assert glued(site, PAGE, "ex_lc_fit_gelu") == pytest.approx(gelu_fit.max_abs_residual, rel=1e-9)
    assert glued(site, PAGE, "ex_lc_fit_gelu") > 0.01
    assert glued(site, PAGE, "ex_lc_fit_gelu_relative") == pytest.approx(gelu_fit.relative_residual, rel=1e-9)
    # Independently: the collapsed map reproduces the identity FFN on these samples.
    W, b = ffnbook.collapse_linear_ffn(*params)
    assert np.max(np.abs(samples @ W + b - ffnbook.ffn(samples, *params, activation="identity"))) < 1e-12


def test_exercise_5_swiglu_at_llama_widths(site):
    # LLaMA-1 7B: d_model 4096, 32 layers; Meta's rule int(2·4d/3) rounded up to a multiple of 256.
    llama = get_model("LLaMA-1 7B")
    d = 4096
    unrounded = int(2 * 4 * d / 3)
    d_ff = -(-unrounded // 256) * 256
    assert (d, d_ff, llama.n_layers) == (llama.d_model, llama.d_ff, 32)
    swiglu, classic = 3 * d * d_ff, 2 * d * 4 * d
    assert glued(site, PAGE, "ex_sw_d_model") == d and glued(site, PAGE, "ex_sw_unrounded") == unrounded
    assert glued(site, PAGE, "ex_sw_d_ff") == d_ff == 11008
    assert glued(site, PAGE, "ex_sw_width_ratio") == d_ff / d
    assert (glued(site, PAGE, "ex_sw_count"), glued(site, PAGE, "ex_sw_classic")) == (swiglu, classic)
    assert glued(site, PAGE, "ex_sw_ratio") == swiglu / classic
    assert glued(site, PAGE, "ex_sw_excess") == pytest.approx(swiglu / classic - 1)
    assert glued(site, PAGE, "ex_sw_all_layers") == 32 * swiglu
    assert glued(site, PAGE, "ex_sw_layers") == 32  # arXiv:2302.13971 Table 2


def test_exercise_6_reshape_test_on_torch(site):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    B, T, D = 4, 7, 64
    ffn_module = ffnbook.PositionwiseFFN(D, 4 * D, activation="gelu").double()
    attn = torch.nn.MultiheadAttention(D, num_heads=4, batch_first=True).double()
    x = torch.randn(B, T, D, dtype=torch.float64)
    folded = x.reshape(B * T, 1, D)
    with torch.no_grad():
        ffn_gap = (ffn_module(x) - ffn_module(folded).reshape(B, T, D)).abs().max().item()
        attn_gap = (attn(x, x, x)[0] - attn(folded, folded, folded)[0].reshape(B, T, D)).abs().max().item()
    assert (glued(site, PAGE, "ex_rs_batch"), glued(site, PAGE, "ex_rs_seq_len")) == (B, T)
    assert ffn_gap < 1e-12 and 0 <= glued(site, PAGE, "ex_rs_ffn_gap") < 1e-12
    assert glued(site, PAGE, "ex_rs_attn_gap") == pytest.approx(attn_gap, rel=1e-9)
    assert glued(site, PAGE, "ex_rs_attn_gap") > 0.1


def test_exercise_7_ffn_share(site):
    t5 = get_model("T5-base v1.1")
    assert (glued(site, PAGE, "ex_sh_d_model"), glued(site, PAGE, "ex_sh_d_ff")) == (t5.d_model, t5.d_ff)
    # Predicted on paper, in units of d_model²: classic 16/3 against 4, gated 8 against 4.
    classic, gated = Fraction(16, 3) / (Fraction(16, 3) + 4), Fraction(8, 12)
    assert (glued(site, PAGE, "ex_sh_classic_num"), glued(site, PAGE, "ex_sh_classic_den")) == (4, 7)
    assert (glued(site, PAGE, "ex_sh_gated_num"), glued(site, PAGE, "ex_sh_gated_den")) == (2, 3)
    assert glued(site, PAGE, "ex_sh_classic") == float(classic)
    assert glued(site, PAGE, "ex_sh_gated") == float(gated)


def test_exercise_8_which_positions_move(site):
    x = ffnbook.random_tokens((6, 64), seed=21)
    ffn = ffnbook.ffn_layer(ffnbook.init_ffn_params(64, 256, seed=22), "gelu")
    attn = ffnbook.attention_layer(ffnbook.init_attention_params(64, seed=23), n_heads=4)
    edited = glued(site, PAGE, "ex_mv_edited")
    ffn_moved = position_independence.movement_by_position(ffn, x, edited)
    attn_moved = position_independence.movement_by_position(attn, x, edited)
    others = [i for i in range(6) if i != edited]
    assert glued(site, PAGE, "ex_mv_first_other") == edited + 1
    assert glued(site, PAGE, "ex_mv_ffn_edited") == pytest.approx(ffn_moved[edited], rel=1e-9)
    assert glued(site, PAGE, "ex_mv_ffn_edited") > 0.01
    assert glued(site, PAGE, "ex_mv_ffn_others") == 0.0 == max(ffn_moved[i] for i in others)
    assert glued(site, PAGE, "ex_mv_seq_len") == 6
    assert glued(site, PAGE, "ex_mv_attn_others_min") == pytest.approx(min(attn_moved[i] for i in others), rel=1e-9)
    assert glued(site, PAGE, "ex_mv_attn_others_min") > 0.001


def test_the_challenge_answer_cites_the_evidence(site):
    """The model answer rests on the rank-collapse result and the FFN-free transformer."""
    cited = cited_keys(site, PAGE, "exercise-4-a-transformer-without-ffns")
    assert {"dong2021attention", "sukhbaatar2019persistent"} <= cited, cited
