"""The built position-independence page: every glued value against a recomputation here."""

from __future__ import annotations

import numpy as np
import pytest
from sitecheck import figures, glued

import ffnbook
from ffnbook import normalisation, positional

PAGE = "position-independence"
D_MODEL, D_FF, SEQ_LEN = 512, 2048, 5
EPS = float(np.finfo(np.float64).eps)
# Differences at rounding level depend on the BLAS library's order of additions (threads,
# kernels), so they are checked against bounds; values of order one against a recomputation.
SAME = {"rel": 1e-9}


@pytest.fixture(scope="module")
def ffn_setup():
    params = ffnbook.init_ffn_params(D_MODEL, D_FF, seed=0)
    x = ffnbook.random_tokens((SEQ_LEN, D_MODEL), seed=0)
    xb = ffnbook.random_tokens((3, SEQ_LEN, D_MODEL), seed=2)
    return params, x, xb


def whole_and_rows(params, x):
    together = ffnbook.ffn(x, *params, activation="gelu")
    alone = np.concatenate([ffnbook.ffn(x[i : i + 1], *params, activation="gelu") for i in range(len(x))])
    return together, alone


def test_widths_are_the_base_transformers(site):
    # Vaswani et al. (2017), base model: d_model 512, d_ff 2048.
    assert (glued(site, PAGE, "pi_d_model"), glued(site, PAGE, "pi_d_ff")) == (512, 2048)
    # The recomputations here use the page's sequence (SEQ_LEN positions) and batch of 3.
    assert (glued(site, PAGE, "pi_seq_len"), glued(site, PAGE, "pi_batch")) == (SEQ_LEN, 3)


def test_experiment_1_and_its_scales(site, ffn_setup):
    params, x, _ = ffn_setup
    together, _ = whole_and_rows(params, x)
    hidden = ffnbook.gelu(x @ params.W1 + params.b1)
    terms = np.abs(hidden) @ np.abs(params.W2) + np.abs(params.b2)  # |h| @ |W2| + |b2| per output
    # Reordering a sum of d_ff + 1 terms moves it by at most about (d_ff + 1)·eps·terms.
    diff = glued(site, PAGE, "pi_batch_diff")
    assert 0 <= diff <= (D_FF + 1) * EPS * terms.max()
    assert glued(site, PAGE, "pi_eps") == EPS
    largest = float(np.abs(together).max())
    assert glued(site, PAGE, "pi_gap_eps_largest") == pytest.approx(diff / largest / EPS, **SAME)
    assert 0 <= glued(site, PAGE, "pi_gap_eps_terms") < D_FF + 1
    assert 0 <= glued(site, PAGE, "pi_gap_share") <= 1
    # In units in the last place of the outputs themselves the gap is larger still: some
    # outputs are far smaller than the largest one.
    assert glued(site, PAGE, "pi_gap_max_ulps") >= glued(site, PAGE, "pi_gap_eps_largest") / 2


def test_the_blas_library(site):
    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    assert glued(site, PAGE, "pi_blas") == f"{blas['name']} {blas['version']}"


def test_the_sweep_extremes(site, ffn_setup):
    params, _, _ = ffn_setup
    largest_terms = 0.0
    for seq_len in (SEQ_LEN, 32):
        for seed in range(3):
            x = ffnbook.random_tokens((seq_len, D_MODEL), seed=seed)
            hidden = ffnbook.gelu(x @ params.W1 + params.b1)
            largest_terms = max(largest_terms, float((np.abs(hidden) @ np.abs(params.W2)).max()))
    lo, hi = glued(site, PAGE, "pi_sweep_lo"), glued(site, PAGE, "pi_sweep_hi")
    assert 0 < lo <= hi <= (D_FF + 1) * EPS * largest_terms
    assert glued(site, PAGE, "pi_sweep_terms_hi") < D_FF + 1


def test_experiments_2_to_4(site, ffn_setup):
    params, _, xb = ffn_setup
    layer = ffnbook.ffn_layer(params, "gelu")
    folded = layer(xb.reshape(-1, 1, D_MODEL)).reshape(xb.shape)
    assert float(np.abs(layer(xb) - folded).max()) < 1e-12
    assert 0 <= glued(site, PAGE, "pi_reshape_diff") < 1e-12
    assert 0 <= glued(site, PAGE, "pi_perm_diff") < 1e-12
    edited = xb.copy()
    edited[:, 3] = ffnbook.random_tokens(edited[:, 3].shape, seed=1)
    moved = np.abs(layer(edited) - layer(xb)).max(axis=(0, 2))
    assert glued(site, PAGE, "pi_edited_position") == 3
    assert glued(site, PAGE, "pi_ffn_changed") == pytest.approx(float(moved[3]), **SAME)
    assert glued(site, PAGE, "pi_ffn_changed") > 0.01
    assert glued(site, PAGE, "pi_ffn_others") == 0.0 == float(np.delete(moved, 3).max())


def test_attention_fails_what_the_ffn_passes(site, ffn_setup):
    _, x, xb = ffn_setup
    attention = ffnbook.attention_layer(ffnbook.init_attention_params(D_MODEL, seed=0), n_heads=8)
    assert glued(site, PAGE, "pi_attn_batch_diff") == pytest.approx(
        ffnbook.batch_vs_rows_max_diff(attention, x), **SAME
    )
    assert glued(site, PAGE, "pi_attn_batch_diff") > 0.1
    assert glued(site, PAGE, "pi_attn_reshape_diff") == pytest.approx(ffnbook.reshape_max_diff(attention, xb), **SAME)
    assert glued(site, PAGE, "pi_attn_reshape_diff") > 0.1
    assert glued(site, PAGE, "pi_attn_perm_diff") < 1e-12
    assert glued(site, PAGE, "pi_attn_others") > 0.1


def test_normalisation_numbers(site, ffn_setup):
    _, x, xb = ffn_setup
    assert glued(site, PAGE, "pi_norm_worst_passing") == 0.0
    # Training-mode batch norm: alone, each token normalises to zero, so the gap is the largest
    # output of the whole-sequence run, recomputed here from the definition.
    whole = (x - x.mean(axis=0)) / np.sqrt(x.var(axis=0) + 1e-5)
    assert glued(site, PAGE, "pi_bn_one_at_a_time") == pytest.approx(float(np.abs(whole).max()))
    assert glued(site, PAGE, "pi_bn_reshape") == 0.0
    moved = normalisation.position_tests(normalisation.batch_norm_train, x, xb).other_positions_moved
    assert glued(site, PAGE, "pi_bn_others") == pytest.approx(moved, **SAME)
    assert glued(site, PAGE, "pi_bn_others") > 0.1


def test_shift_experiment_numbers_and_alt_text(site):
    tiny = positional.tiny_model(d_model=64, d_ff=256, n_heads=4, seed=0)
    ids, starts = [3, 17, 8, 42, 5, 29], range(100)
    shifts = {m: positional.shift_experiment(tiny, ids, starts, m) for m in ("learned", "sinusoidal", "rope", "alibi")}
    assert glued(site, PAGE, "pi_shift_n_starts") == 100
    assert glued(site, PAGE, "pi_shift_learned") == pytest.approx(shifts["learned"].max_change, **SAME)
    assert glued(site, PAGE, "pi_shift_learned") > 0.1
    assert glued(site, PAGE, "pi_shift_sinusoidal") == pytest.approx(shifts["sinusoidal"].max_change, **SAME)
    assert glued(site, PAGE, "pi_shift_sinusoidal") > 0.1
    assert glued(site, PAGE, "pi_shift_rope") < 1e-12
    assert glued(site, PAGE, "pi_shift_alibi") == 0.0
    # T5's bias depends on the key-minus-query offset only (Raffel et al. 2020, §2.1).
    assert glued(site, PAGE, "pi_shift_t5") == 0.0
    alt = glued(site, PAGE, "pi_shift_figure")  # the figure's text is its alt text
    assert "for T5 relative bias it is a flat line" in alt
    learned = shifts["learned"].feature
    assert f"between {min(learned):.2f} and {max(learned):.2f}" in alt
    assert [img["alt"] for img in figures(site, PAGE)] == [alt]


def test_no_positional_encoding_still_counts_predecessors(site):
    """One token repeated after another, no positions: each copy's FFN output, recomputed from the
    prefix that ends at it (what a causal mask lets it see), differs from the others'."""
    tiny = positional.tiny_model(d_model=64, d_ff=256, n_heads=4, seed=0)
    n = 8
    assert glued(site, PAGE, "pi_nope_copies") == n
    copies = np.array([positional.first_ffn_output(tiny, [3] + [17] * t, 0, "none")[-1] for t in range(1, n + 1)])
    spread = max(float(np.abs(a - b).max()) for a in copies for b in copies)
    assert glued(site, PAGE, "pi_nope_causal_spread") == pytest.approx(spread, rel=1e-9)
    assert glued(site, PAGE, "pi_nope_causal_spread") > 1e-3
    assert 0 <= glued(site, PAGE, "pi_nope_bidirectional_spread") < 1e-12  # the same set seen by every copy
