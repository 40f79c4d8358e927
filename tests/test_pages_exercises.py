"""The built Exercises page: solutions folded, every glued number equal to a recomputation.

Each exercise's glued values are read in page order from its section and
compared with the same quantities computed here, where possible from the
algebra written out independently of ffnbook.
"""

from __future__ import annotations

import numpy as np
import pytest
from sitecheck import glued_in, number, soup_of

import ffnbook
from ffnbook import activations, position_independence, width
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


def test_exercise_1_parameter_counts(site):
    d, h = 384, 6
    shown = glued_in(site, PAGE, "exercise-1-parameter-counts-at-your-own-widths")
    expected = [f"{d}", f"{h}", f"{4 * d * d:,}"]
    for d_ff in (4 * d, 5 * d // 2):
        ffn = 2 * d * d_ff + d_ff + d  # written out, not through ffnbook
        expected += [f"{d_ff}", f"{d_ff / d:.{0 if d_ff % d == 0 else 1}f}", f"{ffn:,}",
                     f"{2 * d_ff / d:.0f}", f"{d_ff / (2 * d):.2f}", f"{ffn / (4 * d * d):.4f}"]
    assert shown == expected
    assert ffnbook.ffn_param_count(d, 4 * d) == 2 * d * 4 * d + 5 * d


def test_exercise_2_change_one_token(site):
    layer = ffnbook.ffn_layer(ffnbook.init_ffn_params(64, 256, seed=11), "gelu")
    x = ffnbook.random_tokens((6, 64), seed=12)
    moves = [position_independence.movement_by_position(layer, x, 1, seed=s) for s in range(5)]
    others = max(ffnbook.change_one_token(layer, x, p, seed=s).other_positions
                 for p in range(6) for s in range(5))
    shown = glued_in(site, PAGE, "exercise-2-change-one-token")
    assert shown == ["5", f"{max(m[0] for m in moves):.1e}", f"{min(m[1] for m in moves):.3f}",
                     f"{others:.1e}"]
    assert number(shown[1]) < 1e-12 and number(shown[3]) < 1e-12 and number(shown[2]) > 0.01


def test_exercise_3_linear_collapse(site):
    shown = glued_in(site, PAGE, "exercise-3-the-linear-collapse")
    params = ffnbook.init_ffn_params(64, 256, seed=3)
    samples = ffnbook.random_tokens((200, 64), seed=5)
    gelu_fit = activations.best_affine_fit(samples, ffnbook.ffn(samples, *params, activation="gelu"))
    assert number(shown[0]) < 1e-12  # torch: combined matrix against the two layers
    assert shown[1] == "200"
    assert number(shown[2]) < 1e-12  # the activation-free FFN is affine
    assert shown[3] == f"{gelu_fit.max_abs_residual:.3f}" and number(shown[3]) > 0.01
    assert shown[4] == f"{gelu_fit.relative_residual:.0%}"
    # Independently: the collapsed map reproduces the identity FFN on these samples.
    W, b = ffnbook.collapse_linear_ffn(*params)
    assert np.max(np.abs(samples @ W + b - ffnbook.ffn(samples, *params, activation="identity"))) < 1e-12


def test_exercise_5_swiglu_at_llama_widths(site):
    llama = get_model("LLaMA-1 7B")
    d, d_ff = llama.d_model, llama.d_ff
    assert width.llama_ffn_width(d) == d_ff
    swiglu, classic = 3 * d * d_ff, 2 * d * 4 * d
    shown = glued_in(site, PAGE, "exercise-5-a-swiglu-ffn-at-llama-s-widths")
    assert shown == [f"{d}", f"{8 * d // 3}", f"{d_ff}", f"{d_ff / d:.4f}", f"{swiglu:,}",
                     f"{classic:,}", f"{swiglu / classic:.4f}", f"{llama.n_layers}",
                     f"{llama.n_layers * swiglu:,}"]


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
    shown = glued_in(site, PAGE, "exercise-6-the-reshape-test-on-a-pytorch-module")
    assert shown == ["4", "7", f"{ffn_gap:.1e}", f"{attn_gap:.3f}"]
    assert number(shown[2]) < 1e-12 < 0.1 < number(shown[3])


def test_exercise_7_ffn_share(site):
    t5 = get_model("T5-base v1.1")
    d, f = t5.d_model, t5.d_ff
    shown = glued_in(site, PAGE, "exercise-7-predict-the-ffn-s-share-of-a-block")
    # Predicted on paper: 4/7 for a classic FFN at 8/3 d, 2/3 for a gated one.
    assert shown == [f"{d}", f"{f}", "4", "7", f"{4 / 7:.1%}", "2", "3", f"{2 / 3:.1%}"]
    classic, attn = ffnbook.ffn_param_count(d, f, bias=False), ffnbook.attention_param_count(d, t5.n_heads)
    assert classic / (classic + attn) == pytest.approx(4 / 7)


def test_exercise_8_which_positions_move(site):
    x = ffnbook.random_tokens((6, 64), seed=21)
    ffn = ffnbook.ffn_layer(ffnbook.init_ffn_params(64, 256, seed=22), "gelu")
    attn = ffnbook.attention_layer(ffnbook.init_attention_params(64, seed=23), n_heads=4)
    ffn_moved = position_independence.movement_by_position(ffn, x, 0)
    attn_moved = position_independence.movement_by_position(attn, x, 0)
    shown = glued_in(site, PAGE, "exercise-8-which-positions-move")
    assert shown == [f"{ffn_moved[0]:.3f}", f"{max(ffn_moved[1:]):.1e}", "6",
                     f"{min(attn_moved[1:]):.3f}"]
    assert number(shown[1]) < 1e-12 and number(shown[3]) > 0.001
