"""The numbers and figures on the built transformer-block page equal a fresh recomputation."""

from __future__ import annotations

import numpy as np
import pytest
from sitecheck import figures, glued_after, number

import ffnbook
from ffnbook import block, models

PAGE = "transformer-block"


@pytest.fixture(scope="module")
def setup():
    base = models.get_model("Transformer base (Vaswani et al.)")
    x = ffnbook.random_tokens((8, base.d_model), seed=0)
    attn = ffnbook.init_attention_params(base.d_model, seed=0)
    ffn = ffnbook.init_ffn_params(base.d_model, base.d_ff, seed=0)
    return base, x, attn, ffn


def test_layer_norm_numbers(site, setup):
    _, x, _, _ = setup
    mean_shown = number(glued_after(site, PAGE, "is zero to within"))
    assert 0 <= mean_shown < 1e-12
    # var(LN(x)) = var/(var + eps): the gap the page attributes to eps, from the definition.
    var = x.var(axis=-1)
    expected_gap = float(np.max(1e-5 / (var + 1e-5)))
    assert glued_after(site, PAGE, "variance is one to within") == f"{expected_gap:.1e}"


def test_pre_and_post_norm_numbers(site, setup):
    base, x, attn, ffn = setup
    pre = block.transformer_block(x, attn, ffn, n_heads=base.n_heads, norm="pre")
    post = block.transformer_block(x, attn, ffn, n_heads=base.n_heads, norm="post")
    rms = lambda a: float(np.sqrt(np.mean(a**2)))  # noqa: E731
    assert glued_after(site, PAGE, "differ by up to") == f"{float(np.abs(pre - post).max()):.3f}"
    assert glued_after(site, PAGE, "its output has a root mean square of") == f"{rms(post):.4f}"
    assert number(glued_after(site, PAGE, "its output has a root mean square of")) == pytest.approx(1, abs=1e-4)
    assert glued_after(site, PAGE, "the input, of root mean square") == f"{rms(x):.3f}"
    assert glued_after(site, PAGE, "added, giving") == f"{rms(pre):.3f}"


def test_influence_numbers(site, setup):
    base, x, attn, ffn = setup
    attn_layer = ffnbook.attention_layer(attn, n_heads=base.n_heads)
    ffn_layer = ffnbook.ffn_layer(ffn, "relu")
    off = ~np.eye(8, dtype=bool)
    attn_m = block.influence_matrix(attn_layer, x)
    ffn_m = block.influence_matrix(ffn_layer, x)
    assert glued_after(site, PAGE, "In the attention sublayer") == f"{attn_m[off].max():.3f}"
    assert glued_after(site, PAGE, "on average), and") == f"{attn_m[off].sum() / attn_m.sum():.0%}"
    shown_ffn = glued_after(site, PAGE, "In the FFN sublayer")
    assert number(shown_ffn) == 0.0 and float(ffn_m[off].max()) == 0.0
    assert glued_after(site, PAGE, "moves its own output by") == f"{np.diag(ffn_m).mean():.3f}"
    block_m = block.influence_matrix(block.block_layer(attn, ffn, n_heads=base.n_heads, norm="pre"), x)
    assert glued_after(site, PAGE, "Its off-diagonal part, largest value") == f"{block_m[off].max():.3f}"
    assert glued_after(site, PAGE, "Its diagonal is large") == f"{np.diag(block_m).mean():.2f}"
