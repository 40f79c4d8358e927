"""The numbers and figures on the built transformer-block page equal a fresh recomputation."""

from __future__ import annotations

import numpy as np
import pytest
from sitecheck import glued

import ffnbook
from ffnbook import block

PAGE = "transformer-block"
# The base transformer (Vaswani et al., 2017): d_model 512, d_ff 2048, 8 heads.
D_MODEL, D_FF, HEADS, SEQ = 512, 2048, 8, 8


@pytest.fixture(scope="module")
def setup():
    x = ffnbook.random_tokens((SEQ, D_MODEL), seed=0)
    attn = ffnbook.init_attention_params(D_MODEL, seed=0)
    ffn = ffnbook.init_ffn_params(D_MODEL, D_FF, seed=0)
    return x, attn, ffn


def test_widths_come_from_the_base_model(site):
    assert [glued(site, PAGE, k) for k in ("tb_d_model", "tb_d_ff", "tb_n_heads", "tb_seq_len")] == [
        D_MODEL,
        D_FF,
        HEADS,
        SEQ,
    ]


def test_layer_norm_numbers(site, setup):
    x, _, _ = setup
    assert 0 <= glued(site, PAGE, "tb_ln_mean_error") < 1e-12
    # var(LN(x)) = var/(var + eps): the gap the page attributes to eps, from the definition.
    var = x.var(axis=-1)
    assert glued(site, PAGE, "tb_ln_variance_error") == pytest.approx(float(np.max(1e-5 / (var + 1e-5))), rel=1e-6)


def test_pre_and_post_norm_numbers(site, setup):
    x, attn, ffn = setup
    pre = block.transformer_block(x, attn, ffn, n_heads=HEADS, norm="pre")
    post = block.transformer_block(x, attn, ffn, n_heads=HEADS, norm="post")

    def rms(a):
        return float(np.sqrt(np.mean(a**2)))

    assert glued(site, PAGE, "tb_pre_post_diff") == pytest.approx(float(np.abs(pre - post).max()), rel=1e-9)
    assert glued(site, PAGE, "tb_post_rms") == pytest.approx(rms(post)) == pytest.approx(1, abs=1e-4)
    assert glued(site, PAGE, "tb_input_rms") == rms(x)
    assert glued(site, PAGE, "tb_pre_rms") == pytest.approx(rms(pre), rel=1e-12)


def unit_nudge_influence(layer, x, step=1e-3):
    """The influence matrix written out: a unit-length nudge, output change per unit length."""
    u = np.random.default_rng([0, block._NUDGE_STREAM]).standard_normal(x.shape[1])
    u /= np.linalg.norm(u)
    base = layer(x)
    m = np.empty((len(x), len(x)))
    for j in range(len(x)):
        nudged = x.copy()
        nudged[j] += step * u
        m[:, j] = np.abs(layer(nudged) - base).max(axis=-1) / step
    return m


def test_influence_numbers(site, setup):
    x, attn, ffn = setup
    off = ~np.eye(SEQ, dtype=bool)
    attn_m = unit_nudge_influence(ffnbook.attention_layer(attn, n_heads=HEADS), x)
    ffn_m = unit_nudge_influence(ffnbook.ffn_layer(ffn, "relu"), x)
    block_m = unit_nudge_influence(block.block_layer(attn, ffn, n_heads=HEADS, norm="pre"), x)
    assert glued(site, PAGE, "tb_attn_off_max") == pytest.approx(attn_m[off].max(), rel=1e-9)
    assert glued(site, PAGE, "tb_attn_diag_mean") == pytest.approx(np.diag(attn_m).mean(), rel=1e-9)
    assert glued(site, PAGE, "tb_attn_off_share") == pytest.approx(attn_m[off].sum() / attn_m.sum(), rel=1e-9)
    # "Exactly zero": the page asserts it, and so does the recomputation.
    assert glued(site, PAGE, "tb_ffn_off_max") == 0.0 == float(ffn_m[off].max())
    assert glued(site, PAGE, "tb_ffn_diag_mean") == pytest.approx(np.diag(ffn_m).mean(), rel=1e-9)
    assert glued(site, PAGE, "tb_block_off_max") == pytest.approx(block_m[off].max(), rel=1e-9)
    assert glued(site, PAGE, "tb_block_off_share") == pytest.approx(block_m[off].sum() / block_m.sum(), rel=1e-9)
    assert glued(site, PAGE, "tb_block_diag_mean") == pytest.approx(np.diag(block_m).mean(), rel=1e-9)


def test_parallel_block_numbers(site, setup):
    """The FFN's branch in a serial and a parallel block (GPT-J, PaLM), composed here from the parts."""
    x, attn, ffn = setup
    off = ~np.eye(SEQ, dtype=bool)

    def attend(t):
        return ffnbook.self_attention(block.layer_norm(t), attn, n_heads=HEADS)

    def serial_branch(t):
        return ffnbook.ffn(block.layer_norm(t + attend(t)), *ffn, activation="relu")

    def parallel_branch(t):
        return ffnbook.ffn(block.layer_norm(t), *ffn, activation="relu")

    serial_m = unit_nudge_influence(serial_branch, x)
    parallel_m = unit_nudge_influence(parallel_branch, x)
    assert glued(site, PAGE, "tb_branch_serial_off_max") == pytest.approx(serial_m[off].max(), rel=1e-9)
    assert glued(site, PAGE, "tb_branch_serial_off_share") == pytest.approx(
        serial_m[off].sum() / serial_m.sum(), rel=1e-9
    )
    assert glued(site, PAGE, "tb_branch_parallel_off_max") == 0.0 == float(parallel_m[off].max())
    parallel = x + attend(x) + parallel_branch(x)
    serial = x + attend(x) + serial_branch(x)
    assert glued(site, PAGE, "tb_parallel_vs_serial") == pytest.approx(float(np.abs(parallel - serial).max()), rel=1e-9)
