"""The implementation page, looked up by glue key, against what ffnbook.implementation computes now."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from sitecheck import figures, glued

import ffnbook
from bookext.kernel_template import THREAD_VARIABLES

torch = pytest.importorskip("torch")
from ffnbook import implementation  # noqa: E402

PAGE = "implementation"


@pytest.fixture(scope="module")
def ffn_case():
    params = ffnbook.init_ffn_params(512, 2048, seed=0)
    x = ffnbook.random_tokens((2, 5, 512), seed=0)
    return params, x


ONE_THREAD_RECOMPUTATION = """
import json, ffnbook
from ffnbook import implementation
params = ffnbook.init_ffn_params(512, 2048, seed=0)
x = ffnbook.random_tokens((2, 5, 512), seed=0)
print(json.dumps({a: implementation.transformer_encoder_ffn_max_diff(params, x, a, nhead=8)
                  for a in ("relu", "gelu")}))
"""


def encoder_diffs_on_one_thread() -> dict[str, float]:
    """The encoder-layer differences recomputed as the page's kernel computed them: with every
    thread variable of bookext.kernel_template at 1 (the last bits of a sum depend on how it is
    split across threads)."""
    env = {**os.environ, **dict.fromkeys(THREAD_VARIABLES, "1")}
    result = subprocess.run(
        [sys.executable, "-c", ONE_THREAD_RECOMPUTATION], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(result.stdout)


def test_cross_checks(site, ffn_case):
    params, x = ffn_case
    assert (glued(site, PAGE, "im_d_model"), glued(site, PAGE, "im_d_ff")) == (512, 2048)
    assert glued(site, PAGE, "im_numpy_torch_diff") == pytest.approx(ffnbook.numpy_torch_max_diff(x, params, "gelu"))
    for activation, recomputed in encoder_diffs_on_one_thread().items():
        assert glued(site, PAGE, f"im_encoder_diff_{activation}") == recomputed < 1e-12
    assert glued(site, PAGE, "im_linear_diff") == implementation.linear_positionwise_max_diff(x) < 1e-12
    assert glued(site, PAGE, "im_torch_version") == torch.__version__


def test_precision_numbers(site, ffn_case):
    params, x = ffn_case
    c = implementation.precision_comparison(params, x[0], "gelu")
    assert glued(site, PAGE, "im_f64_diff") == c.float64 and glued(site, PAGE, "im_f32_diff") == c.float32
    assert glued(site, PAGE, "im_f32_diff") > glued(site, PAGE, "im_f64_diff")
    assert glued(site, PAGE, "im_eps32") == 2.0**-23 and glued(site, PAGE, "im_eps64") == 2.0**-52
    assert glued(site, PAGE, "im_eps_ratio") == 2.0**29


def test_format_numbers(site):
    # IEEE half: 10 fraction bits, max 65504, smallest normal 2^-14; bfloat16: 7 fraction bits and
    # float32's 8 exponent bits, so float32's smallest normal 2^-126.
    assert glued(site, PAGE, "im_bf16_eps") == 2.0**-7 and glued(site, PAGE, "im_f16_eps") == 2.0**-10
    assert glued(site, PAGE, "im_f16_max") == 65504.0 and glued(site, PAGE, "im_f16_tiny") == 2.0**-14
    assert glued(site, PAGE, "im_bf16_tiny") == 2.0**-126
    assert glued(site, PAGE, "im_bf16_max") == pytest.approx((2 - 2.0**-7) * 2.0**127)
    assert glued(site, PAGE, "im_small_f16") == 0.0  # 1e-8 is below float16's smallest subnormal 2^-24
    assert glued(site, PAGE, "im_small_bf16") == pytest.approx(glued(site, PAGE, "im_small"), rel=2.0**-8)
    # Accuracy follows precision: float32 far better than float16, float16 better than bfloat16.
    assert glued(site, PAGE, "im_f32_error") < glued(site, PAGE, "im_f16_error") < glued(site, PAGE, "im_bf16_error")


def test_dropout_numbers(site, ffn_case):
    params, x = ffn_case
    d = implementation.dropout_demo(params, x, "gelu", p=0.1)
    assert glued(site, PAGE, "im_dropout_p") == 0.1
    assert glued(site, PAGE, "im_train_diff") > 0
    assert glued(site, PAGE, "im_eval_diff") == 0.0
    assert glued(site, PAGE, "im_hidden_scale") == pytest.approx(d.hidden_scale)
    assert glued(site, PAGE, "im_expected_scale") == pytest.approx(1 / 0.9)
    assert glued(site, PAGE, "im_hidden_scale") == pytest.approx(1 / 0.9, rel=1e-6)


def test_init_numbers(site):
    scales = implementation.init_output_scale(512, 2048, activation="relu")
    assert glued(site, PAGE, "im_std_xavier") == scales["xavier_uniform"]
    assert glued(site, PAGE, "im_std_he") == scales["he_lecun"]
    assert glued(site, PAGE, "im_std_torch_predicted") == pytest.approx(np.sqrt(1 / 18))
    assert 0 < glued(site, PAGE, "im_w1_gap") < 1e-2  # "falls short of the bound by only ..."


def test_figure_alt_text_from_its_values(site):
    imgs = figures(site, PAGE)
    assert len(imgs) == 1
    alt = imgs[0].get("alt", "")
    scales = implementation.init_output_scale(512, 2048, activation="relu")
    assert f"He (W1) + LeCun (W2) {scales['he_lecun']:.2f}" in alt
