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
from bookext.execution.kernel_template import THREAD_VARIABLES

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
    thread variable of bookext.execution.kernel_template at 1 (the last bits of a sum depend on how it is
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


def test_tensor_parallel_split(site, ffn_case):
    # Megatron's split of the page's FFN over four devices equals the whole FFN; cutting W1 by
    # rows and applying GELU before the sum does not, except without an activation.
    from ffnbook import parallel

    params, x = ffn_case
    whole = ffnbook.ffn(x, *params, activation="gelu")
    assert glued(site, PAGE, "im_tp_devices") == 4
    assert glued(site, PAGE, "im_tp_units") == 2048 // 4
    split = parallel.tensor_parallel_ffn(x, params, 4, "gelu").output
    assert glued(site, PAGE, "im_tp_error") == pytest.approx(float(np.max(np.abs(split - whole))), abs=1e-15)
    assert glued(site, PAGE, "im_tp_error") < 1e-12
    hidden_by_rows = sum(
        ffnbook.get_activation("gelu")(x[..., b] @ params.W1[b] + (params.b1 if i == 0 else 0))
        for i, b in enumerate(slice(128 * k, 128 * k + 128) for k in range(4))
    )
    row_error = float(np.max(np.abs(hidden_by_rows @ params.W2 + params.b2 - whole)))
    assert glued(site, PAGE, "im_tp_row_error") == pytest.approx(row_error, rel=1e-9) and row_error > 1e-2
    assert glued(site, PAGE, "im_tp_row_linear") < 1e-12


def test_gated_split_by_packing(site):
    assert glued(site, PAGE, "im_tp_gated_error") < 1e-12
    assert glued(site, PAGE, "im_tp_interleaved_error") < 1e-12
    assert glued(site, PAGE, "im_tp_concatenated_error") > 1e-2  # gates on one device, ups on the other


def test_tensor_parallel_cost_of_llama2_70b(site):
    # Llama-2 70B (the sheet): d_model 8192, SwiGLU width 28672; 8 devices, bfloat16.
    from ffnbook.models import get_model

    m = get_model("Llama-2 70B")
    assert glued(site, PAGE, "im_tp_model") == m.name and glued(site, PAGE, "im_tp_model_devices") == 8
    assert glued(site, PAGE, "im_tp_values") == m.d_model
    sent = 2 * 7 / 8 * m.d_model * 2
    flops = 3 * 2 * m.d_model * m.d_ff / 8
    assert glued(site, PAGE, "im_tp_bytes") == sent
    assert glued(site, PAGE, "im_tp_flops") == flops
    assert glued(site, PAGE, "im_tp_flops_per_byte") == pytest.approx(flops / sent)


def test_fused_gate_traffic(site):
    # Llama-3 8B's d_ff: unfused a in, act(a) out and back in, b in, product out (5 d_ff); fused 3 d_ff.
    from ffnbook.models import get_model

    d_ff = get_model("Llama-3 8B").d_ff
    assert glued(site, PAGE, "im_glu_d_ff") == d_ff
    assert (glued(site, PAGE, "im_glu_unfused"), glued(site, PAGE, "im_glu_fused")) == (5 * d_ff, 3 * d_ff)
    assert glued(site, PAGE, "im_glu_saved") == pytest.approx(2 / 5)
