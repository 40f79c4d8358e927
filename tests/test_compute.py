"""FLOP formulas against explicit multiply-add counts and torch's FLOP counter; crossovers; timing."""

from __future__ import annotations

import math

import pytest

from ffnbook import compute, models
from ffnbook.plotting import BookFigure

torch = pytest.importorskip("torch")


def matmul_flops(*shapes) -> int:
    """2·m·k·n for each product of an (m, k) by a (k, n) matrix: one multiply-add = 2 FLOPs."""
    return sum(2 * m * k * n for m, k, n in shapes)


# --- formulas against explicit shapes -------------------------------------------------------


@pytest.mark.parametrize("d_model, d_ff", [(512, 2048), (768, 3072), (7, 13)])
def test_ffn_flops_count_one_row_through_each_matrix(d_model, d_ff):
    classic = matmul_flops((1, d_model, d_ff), (1, d_ff, d_model))
    gated = matmul_flops((1, d_model, d_ff), (1, d_model, d_ff), (1, d_ff, d_model))
    assert compute.ffn_flops_per_token(d_model, d_ff) == classic
    assert compute.ffn_flops_per_token(d_model, d_ff, gated=True) == gated
    assert compute.ffn_flops_per_token(d_model, d_ff, gated=True, n_active=3) == 3 * gated


@pytest.mark.parametrize("d_model, n_heads, n_kv_heads", [(768, 12, 12), (4096, 32, 8), (64, 8, 1)])
def test_projection_flops_count_the_four_projections(d_model, n_heads, n_kv_heads):
    d_head = d_model // n_heads
    expected = matmul_flops(
        (1, d_model, n_heads * d_head),  # Q
        (1, d_model, n_kv_heads * d_head),  # K
        (1, d_model, n_kv_heads * d_head),  # V
        (1, n_heads * d_head, d_model),  # O
    )
    assert compute.attention_projection_flops_per_token(d_model, n_heads, n_kv_heads) == expected


@pytest.mark.parametrize("n_ctx, n_heads, d_head, d_head_v", [(1024, 12, 64, 64), (10, 128, 192, 128), (1, 1, 1, 1)])
def test_score_flops_count_qk_and_av_for_every_head(n_ctx, n_heads, d_head, d_head_v):
    # One query row against n_ctx keys, then the (1, n_ctx) weights times (n_ctx, d_head_v) values, per head.
    per_head = matmul_flops((1, d_head, n_ctx), (1, n_ctx, d_head_v))
    got = compute.attention_score_flops_per_token(n_ctx, n_heads, d_head=d_head, d_head_v=d_head_v)
    assert got == n_heads * per_head


def test_score_flops_are_4_n_d_attn_for_equal_head_widths():
    assert compute.attention_score_flops_per_token(300, 16, d_model=1024) == 4 * 300 * 1024


# --- formulas against torch's FLOP counter --------------------------------------------------


@pytest.mark.parametrize("gated, n_kv_heads", [(False, None), (True, 2)])
def test_counted_flops_equal_formulas(gated, n_kv_heads):
    d_model, d_ff, n_heads, n_ctx = 64, 160, 8, 40
    counted = compute.counted_flops_per_token(d_model, d_ff, n_heads, n_ctx, gated=gated, n_kv_heads=n_kv_heads)
    assert counted.ffn == compute.ffn_flops_per_token(d_model, d_ff, gated=gated)
    assert counted.projections == compute.attention_projection_flops_per_token(d_model, n_heads, n_kv_heads)
    assert counted.scores == compute.attention_score_flops_per_token(n_ctx, n_heads, d_model=d_model)


def test_torch_sdpa_counts_the_same_score_flops():
    # torch's own fused attention, counted independently of ffnbook's code.
    from torch.utils.flop_counter import FlopCounterMode

    n_heads, n_ctx, d_head = 4, 24, 16
    # On "meta" tensors sdpa runs its reference decomposition, whose matmuls the counter sees
    # (the fused CPU kernel is not registered with the counter).
    q = k = v = torch.empty(1, n_heads, n_ctx, d_head, device="meta")
    counter = FlopCounterMode(display=False)
    with counter:
        torch.nn.functional.scaled_dot_product_attention(q, k, v)
    per_token = counter.get_total_flops() // n_ctx
    assert per_token == compute.attention_score_flops_per_token(n_ctx, n_heads, d_head=d_head)


def test_torch_counts_a_real_linear_ffn():
    from torch.utils.flop_counter import FlopCounterMode

    ffn = torch.nn.Sequential(torch.nn.Linear(32, 96), torch.nn.GELU(), torch.nn.Linear(96, 32))
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        ffn(torch.zeros(5, 32))
    assert counter.get_total_flops() == 5 * compute.ffn_flops_per_token(32, 96)


# --- crossover ------------------------------------------------------------------------------


def test_crossover_is_d_ff_for_a_classic_ffn_with_full_width_heads():
    assert compute.crossover_length(compute.ffn_flops_per_token(512, 2048), 8, 64) == 2048
    # gated: 3/2 · d_ff; MoE: times the active experts
    assert compute.crossover_length(compute.ffn_flops_per_token(512, 2048, gated=True), 8, 64) == 3072
    assert compute.crossover_length(compute.ffn_flops_per_token(512, 2048, gated=True, n_active=2), 8, 64) == 6144


# The derived examples of references.md (item 9, marked C): n* = d_ff · (1 or 3/2) · active experts.
REFERENCE_CROSSOVERS = {
    "GPT-2 small": 3072,
    "GPT-3 175B": 49152,
    "LLaMA-1 7B": 16500,
    "Llama-2 70B": 43000,
    "Mixtral 8x7B": 43000,
}


@pytest.mark.parametrize("name, approx", REFERENCE_CROSSOVERS.items())
def test_model_crossovers_reproduce_the_reference_examples(name, approx):
    model = models.get_model(name)
    row = compute.model_crossover(model)
    factor = 1.5 if model.gated else 1.0
    active = max(model.experts_per_token, 1)
    assert row["crossover"] == pytest.approx(model.d_ff * factor * active, rel=1e-12)
    assert row["crossover"] == pytest.approx(approx, rel=0.01)


def test_deepseek_crossover_uses_latent_attention_head_widths():
    row = compute.model_crossover(models.get_model("DeepSeek-V3"))
    # 8 routed + 1 shared SwiGLU experts of width 2048; 128 heads scoring in 192 dims, 128-d values.
    ffn = 2 * 3 * 7168 * 2048 * 9
    assert row["n_active"] == 9
    assert row["crossover"] == pytest.approx(ffn / (2 * 128 * (192 + 128)))


def test_deepseek_crossover_in_the_absorbed_form():
    # Absorbed (DeepSeek-V2 §2.1; DeepSeek-V3's inference/model.py, attn_impl "absorb"): each of the
    # 128 heads scores against the 512-wide latent plus the 64-wide rotary key and sums 512-wide latents.
    deepseek = models.get_model("DeepSeek-V3")
    row = compute.model_crossover(deepseek, mla_form="absorbed")
    ffn = 2 * 3 * 7168 * 2048 * 9
    assert (row["d_head"], row["d_head_v"]) == (512 + 64, 512)
    assert row["crossover"] == pytest.approx(ffn / (2 * 128 * (576 + 512)))
    assert row["crossover"] < compute.model_crossover(deepseek)["crossover"]
    assert "absorbed" in row["note"] and "un-absorbed" in compute.model_crossover(deepseek)["note"]


def test_mla_forms_refuse_other_models_and_unknown_forms():
    with pytest.raises(ValueError, match="does not use latent attention"):
        compute.mla_score_widths(models.get_model("GPT-2 small"))
    with pytest.raises(ValueError, match="mla_form must be one of"):
        compute.model_crossover(models.get_model("DeepSeek-V3"), mla_form="folded")


def test_palm_crossover_from_its_table_1_head_size():
    # 48 heads of 256 (Table 1's caption), SwiGLU at d_ff = 4·18432: n* = 6·d·d_ff / (4·48·256).
    row = compute.model_crossover(models.get_model("PaLM 540B"))
    assert row["d_attn"] == 48 * 256 != 18432
    assert row["crossover"] == 6 * 18432 * 73728 / (4 * 48 * 256)
    assert row["context_length"] == 2048 and row["beyond_context"] is True


def test_every_model_has_a_crossover():
    rows = compute.crossover_rows()
    assert len(rows) == len(models.load_models())
    assert all(m.d_head is not None for m in models.load_models())
    assert all(r["crossover"] > 0 for r in rows)


def test_kaplan_context_term_is_half_ours():
    d_attn, n_ctx = 768, 1000
    kaplan_context = compute.kaplan_forward_flops_per_token(1, 1, n_ctx, d_attn) - 2
    ours = compute.attention_score_flops_per_token(n_ctx, 12, d_model=d_attn)
    assert 2 * kaplan_context == ours


def test_crossover_table_shows_dashes_for_missing_values():
    text = compute.crossover_table()._repr_markdown_()
    t5_line = next(line for line in text.splitlines() if line.startswith("| T5-base v1.1"))
    assert "–" in t5_line  # the sheet gives no pre-training context for T5 v1.1


# --- timing (values are never compared with each other beyond a gross sanity check) ---------


def test_timing_returns_plain_positive_floats_and_restores_threads():
    threads = torch.get_num_threads()
    result = compute.time_ffn_vs_attention((64, 1024), d_model=64, d_ff=256, n_heads=2, repeats=1)
    assert torch.get_num_threads() == threads
    assert result.seq_lens == [64, 1024]
    for values in (result.ffn_seconds, result.attention_seconds):
        assert len(values) == 2
        assert all(type(v) is float and v > 0 for v in values)
    # 16× and 256× more work: the longer sequence is slower, however noisy the machine.
    assert result.ffn_seconds[1] > result.ffn_seconds[0]
    assert result.attention_seconds[1] > result.attention_seconds[0]


def synthetic(d_ff=64):
    seq = [16, 32, 64, 128, 256]
    return compute.TimingResult(seq, [n * 1e-3 for n in seq], [n * n * 1e-3 / d_ff for n in seq], 32, d_ff, 1)


def test_measured_crossover_interpolates_in_log_space():
    assert compute.measured_crossover(synthetic(64)) == pytest.approx(64)
    assert compute.measured_crossover(synthetic(100)) == pytest.approx(100)
    assert compute.measured_crossover(synthetic(10_000)) is None
    assert compute.measured_crossover(synthetic(1)) == 16


def test_growth_exponents_of_exact_power_laws():
    ffn, attn = compute.growth_exponents(synthetic(), min_len=16)
    assert (ffn, attn) == (pytest.approx(1.0), pytest.approx(2.0))


def test_flop_model_seconds_cross_at_d_ff():
    t = synthetic(64)
    ffn, attn = compute.flop_model_seconds(t)
    # The scale is fitted on the FFN; the model's two curves meet where FLOPs do, n = d_ff.
    i = t.seq_lens.index(64)
    assert ffn[i] == pytest.approx(attn[i])


def test_timing_figure_is_a_book_figure():
    fig = compute.timing_figure(synthetic())
    assert isinstance(fig, BookFigure)
    assert "<svg" in fig.to_svg()


# --- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: compute.ffn_flops_per_token(0, 10), ValueError, "d_model must be a positive integer, got 0"),
        (lambda: compute.ffn_flops_per_token(8, 2.5), TypeError, "d_ff must be a positive integer"),
        (lambda: compute.ffn_flops_per_token(8, 8, n_active=0), ValueError, "n_active"),
        (lambda: compute.attention_projection_flops_per_token(100, 3), ValueError, "divisible by n_heads=3"),
        (lambda: compute.attention_projection_flops_per_token(64, 8, 3), ValueError, "n_kv_heads=3"),
        (lambda: compute.attention_score_flops_per_token(10, 4), TypeError, "give d_model or d_head"),
        (lambda: compute.crossover_length(-1, 4, 8), ValueError, "ffn_flops must be a positive"),
        (lambda: compute.time_ffn_vs_attention((128, 64)), ValueError, "increasing"),
        (lambda: compute.model_crossover("GPT-2"), TypeError, "ModelConfig"),
        (lambda: compute.timing_figure([1, 2]), TypeError, "TimingResult"),
    ],
)
def test_bad_input_is_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_crossover_length_is_a_float():
    assert isinstance(compute.crossover_length(1000, 1, 5), float)
    assert math.isclose(compute.crossover_length(1000, 1, 5), 1000 / (4 * 5))


# --- softmax, Kaplan's condition, contexts and windows ----------------------------------------


def test_softmax_scores_and_their_fraction():
    assert compute.softmax_scores_per_token(1024, 12) == 12 * 1024
    # One score per FLOP count 2·(d_head + d_head_v) of the two products.
    assert compute.softmax_share_of_score_flops(64) == 1 / 256
    assert compute.softmax_share_of_score_flops(192, 128) == 1 / 640
    scores = compute.attention_score_flops_per_token(1024, 12, d_model=768)
    assert compute.softmax_scores_per_token(1024, 12) / scores == compute.softmax_share_of_score_flops(64)
    with pytest.raises(ValueError):
        compute.softmax_scores_per_token(0, 12)


def test_kaplan_context_ratio_is_n_ctx_over_12_d_model():
    # Kaplan et al. §2.1: context term 2·n_ctx·d_model per layer against 2·12·d_model² of weights.
    for n_ctx, d_model in ((1024, 768), (2048, 12288), (8192, 512)):
        assert compute.kaplan_context_ratio(n_ctx, d_model) == pytest.approx(n_ctx / (12 * d_model))
    assert compute.kaplan_context_ratio(12 * 1024, 1024) == pytest.approx(1.0)
    # With d_ff = 2·d the layer holds 2·d·(2·d + 2·d) = 8·d² weights: the ratio is n_ctx / (8·d_model).
    assert compute.kaplan_context_ratio(1024, 768, d_ff=2 * 768) == pytest.approx(1024 / (8 * 768))


def test_kaplan_crossover_is_twice_ours():
    ffn = compute.ffn_flops_per_token(768, 3072)
    assert compute.kaplan_crossover_length(ffn, 768) == 2 * compute.crossover_length(ffn, 12, 64) == 6144


def test_crossover_rows_know_the_contexts():
    rows = {r["model"]: r for r in compute.crossover_rows()}
    gpt2 = rows["GPT-2 small"]
    assert gpt2["context_length"] == 1024 and gpt2["beyond_context"] is True and gpt2["reachable"] is False
    mistral = rows["Mistral 7B"]
    # Mistral 7B Table 1: window 4096, context 8192; its gated crossover is 1.5 · 14336 = 21504.
    assert mistral["attention_window"] == 4096 and mistral["attention_span"] == 4096
    assert mistral["crossover"] == 21504 and mistral["reachable"] is False
    assert "never reached" in mistral["note"]
    assert rows["GPT-3 175B"]["reachable"] is None  # banded layers of unknown size
    assert rows["Transformer base (Vaswani et al.)"]["beyond_context"] is None
    # gpt-oss-120b: a window of 128 on 18 of its 36 layers; the other layers attend to everything,
    # so no window caps the model's reach, and the table names the windowed layers.
    oss = compute.model_crossover(models.get_model("gpt-oss-120b"))
    assert oss["attention_window"] is None and oss["note"] == "window 128 on 18 of 36 layers; the others full"


def test_crossover_context_counts_by_hand():
    rows = [
        {"crossover": 10.0, "context_length": 5, "beyond_context": True, "reachable": False, "attention_window": None},
        {"crossover": 10.0, "context_length": 20, "beyond_context": False, "reachable": True, "attention_window": None},
        {"crossover": None, "context_length": 20, "beyond_context": None, "reachable": None, "attention_window": None},
        {"crossover": 10.0, "context_length": None, "beyond_context": None, "reachable": False, "attention_window": 4},
    ]
    assert compute.crossover_context_counts(rows) == {
        "known": 2,
        "beyond_context": 1,
        "within_context": 1,
        "never_reached": 1,
    }
