"""The built gated-FFN page shows what ffnbook computes now."""

from __future__ import annotations

import numpy as np
from sitecheck import glued

import ffnbook
from ffnbook import gated

PAGE = "gated-ffn"


def test_t5_counts_on_the_page(site):
    # T5-base: d_model 768; v1.0 ReLU d_ff 3072, v1.1 GEGLU d_ff 2048 (Shazeer, 2020; t5x gin).
    assert glued(site, PAGE, "gf_t5_d_model") == 768
    assert (glued(site, PAGE, "gf_t5_v10_d_ff"), glued(site, PAGE, "gf_t5_v11_d_ff")) == (3072, 2048)
    assert 2 * 768 * 3072 == 3 * 768 * 2048 == 4_718_592
    for key in ("gf_t5_v10_params", "gf_t5_v10_counted", "gf_t5_v11_params", "gf_t5_v11_counted"):
        assert glued(site, PAGE, key) == 4_718_592, key
    assert glued(site, PAGE, "gf_t5_width_ratio") == 2 / 3


def test_cross_checks_on_the_page(site):
    assert (glued(site, PAGE, "gf_d_model"), glued(site, PAGE, "gf_d_ff")) == (768, 2048)
    assert 0 <= glued(site, PAGE, "gf_torch_diff") < 1e-12
    assert 0 <= glued(site, PAGE, "gf_loop_diff") < 1e-12
    assert glued(site, PAGE, "gf_others") < 1e-12 < 1e-3 < glued(site, PAGE, "gf_changed")


def test_gate_numbers_on_the_page(site):
    params = gated.init_gated_params(768, 2048, seed=0)
    x = ffnbook.random_tokens((2, 6, 768), seed=0)
    gate = np.maximum(x @ params.W, 0)  # the ReGLU gate, written out
    product = gate * (x @ params.V)
    assert glued(site, PAGE, "gf_n_hidden") == gate.size == 2 * 6 * 2048
    assert glued(site, PAGE, "gf_closed") == float(np.mean(gate == 0))
    assert glued(site, PAGE, "gf_negative") == float(np.mean(product < 0))
