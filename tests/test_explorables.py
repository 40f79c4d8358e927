"""ffnbook.explorables: the reference values the explorables' script must reproduce.

Each state function is checked against an independent route to the same
number: the sheet itself, the per-block counts of model_parameters, or the
algebra of the formulas. The script is compared with these functions in
tests/test_explorables_browser.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ffnbook import compute, explorables, model_parameters, width
from ffnbook.models import get_model, load_models
from ffnbook.plotting import PALETTE

# Every sheet model whose attention the parameter breakdown can count (not PaLM's 48 heads of 256).
BREAKDOWN_MODELS = sorted(m.name for m in load_models() if model_parameters.countable(m))


# --- width ----------------------------------------------------------------------------------


@pytest.mark.parametrize("setting", width.LLAMA_SETTINGS, ids=lambda s: s.model)
def test_gated_width_follows_llamas_released_settings(setting):
    ratio = 4 * (setting.ffn_dim_multiplier or 1.0)
    d_ff = explorables.width_d_ff(setting.d_model, ratio, gated=True, multiple_of=setting.multiple_of)
    assert d_ff == get_model(setting.model).d_ff


def test_classic_width_reproduces_every_classic_model_of_the_sheet():
    for m in load_models():
        if not m.gated and not m.is_moe:
            assert explorables.width_d_ff(m.d_model, m.d_ff / m.d_model, gated=False) == m.d_ff


def test_gated_two_thirds_keeps_the_classic_budget():
    # Without rounding (a block of 1) and with d_model a multiple of three, a gated FFN
    # at r = 4 is exactly 8/3 · d_model wide and holds the 8 · d_model² weights of a classic one.
    for d_model in (768, 3072, 4608):
        gated = explorables.width_state(d_model, 4.0, gated=True, multiple_of=1, bias=False)
        classic = explorables.width_state(d_model, 4.0, gated=False, bias=False)
        assert gated["d_ff"] * 3 == 8 * d_model
        assert gated["ffn_params"] == classic["ffn_params"] == 8 * d_model**2
        assert classic["ffn_share"] == pytest.approx(2 / 3, abs=1e-15)


def test_width_state_counts_biases_in_both_sublayers():
    with_bias = explorables.width_state(512, 4.0, gated=False, bias=True)
    without = explorables.width_state(512, 4.0, gated=False, bias=False)
    assert with_bias["ffn_params"] - without["ffn_params"] == 2048 + 512  # b1 and b2
    assert with_bias["attention_params"] - without["attention_params"] == 4 * 512  # four projections


def test_width_rejects_a_bad_ratio():
    with pytest.raises(ValueError, match="ratio"):
        explorables.width_d_ff(512, float("nan"), gated=False)
    with pytest.raises(ValueError, match="round"):
        explorables.width_d_ff(1, 0.2, gated=False)


# --- parameters -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", BREAKDOWN_MODELS)
def test_unchanged_model_is_the_sheets_breakdown(name):
    state = explorables.parameter_state(name)
    b = model_parameters.parameter_breakdown(get_model(name))
    assert {k: state[k] for k in b._asdict() if k != "name"} == {k: v for k, v in b._asdict().items() if k != "name"}
    assert state["ffn_share"] == b.ffn_share and state["ffn_share_active"] == b.ffn_share_active


def test_initial_shares_are_the_static_figures():
    rows = {r["label"]: r for r in model_parameters.share_rows()}
    for name in model_parameters.FIGURE_MODELS:
        state = explorables.parameter_state(name)
        row = rows.get(name) or rows[name + " (stored)"]
        assert state["ffn_share"] == row["ffn"] and state["attention_share"] == row["attention"]
        assert state["embeddings_share"] == row["embeddings"] and state["rest_share"] == row["rest"]


def test_more_blocks_add_whole_blocks():
    # Independent route: the per-block count of model_parameters.block_breakdown.
    for name, extra in (("GPT-2 small", 5), ("Llama-3 8B", 3), ("Mixtral 8x7B", 2), ("DeepSeek-V3", 1)):
        m = get_model(name)
        base, more = explorables.parameter_state(name), explorables.parameter_state(name, n_layers=m.n_layers + extra)
        block = model_parameters.block_breakdown(m)
        assert more["total"] - base["total"] == extra * block["total"]
        assert more["total_active"] - base["total_active"] == extra * block["total_active"]


def test_encoder_decoder_layers_split_between_the_stacks():
    t5 = explorables.parameter_state("T5-base v1.0", n_layers=12)
    full = explorables.parameter_state("T5-base v1.0")
    m = get_model("T5-base v1.0")
    encoder = model_parameters.block_breakdown(m, cross_attention=False)["total"]
    decoder = model_parameters.block_breakdown(m, cross_attention=True)["total"]
    assert full["total"] - t5["total"] == 6 * (encoder + decoder)
    with pytest.raises(ValueError, match="even"):
        explorables.model_variant("T5-base v1.0", n_layers=7)


def test_tying_the_head_moves_one_vocabulary_matrix():
    for name in ("GPT-2 small", "LLaMA-1 7B"):
        m = get_model(name)
        tied, untied = (explorables.parameter_state(name, tied_head=t)["embeddings"] for t in (True, False))
        assert untied - tied == m.vocab_size * m.d_model


def test_vocabulary_and_kv_heads_change_only_their_own_part():
    m = get_model("Llama-3 8B")
    base = explorables.parameter_state(m.name)
    smaller = explorables.parameter_state(m.name, vocab_size=32000)
    assert base["embeddings"] - smaller["embeddings"] == 2 * (m.vocab_size - 32000) * m.d_model  # untied
    mha = explorables.parameter_state(m.name, n_kv_heads=m.n_heads)
    # Full K and V projections instead of a quarter each: 2 · (d² − d · d/4) more per block.
    assert mha["attention"] - base["attention"] == m.n_layers * 2 * (m.d_model**2 - m.d_model * m.d_model // 4)
    assert mha["ffn"] == base["ffn"] and mha["embeddings"] == base["embeddings"]


def test_width_keeps_the_ffn_ratio():
    half = explorables.model_variant("LLaMA-1 7B", d_model=2048)
    assert (half.d_ff, half.d_ff_dense) == (5504, 5504)
    deepseek = explorables.model_variant("DeepSeek-V3", d_model=3584)
    assert (deepseek.d_ff, deepseek.d_ff_dense) == (1024, 9216)
    with pytest.raises(ValueError, match="multiple of"):
        explorables.model_variant("GPT-2 small", d_model=100)


def test_variants_refuse_what_the_model_cannot_have():
    with pytest.raises(ValueError, match="latent"):
        explorables.model_variant("DeepSeek-V3", n_kv_heads=8)
    with pytest.raises(ValueError, match="divide"):
        explorables.model_variant("Llama-3 8B", n_kv_heads=5)
    with pytest.raises(ValueError, match="dense model"):
        explorables.model_variant("GPT-2 small", n_experts=8)
    with pytest.raises(ValueError, match="at most"):
        explorables.model_variant("Mixtral 8x7B", n_experts=4, experts_per_token=6)
    with pytest.raises(ValueError, match="dense blocks"):
        explorables.model_variant("DeepSeek-V3", n_layers=3)
    with pytest.raises(TypeError, match="model name"):
        explorables.model_variant(42)
    with pytest.raises(ValueError, match="model must be a model of models.csv, got 'GPT-5'"):
        explorables.parameter_state("GPT-5")


# --- mixture of experts ------------------------------------------------------------------------


def test_moe_state_unchanged_is_the_breakdown():
    for name in ("Mixtral 8x7B", "DeepSeek-V3"):
        b = model_parameters.parameter_breakdown(get_model(name))
        s = explorables.moe_state(name)
        assert (s["stored"], s["active"], s["ffn"], s["ffn_active"]) == (b.total, b.total_active, b.ffn, b.ffn_active)


def test_more_experts_grow_the_stored_count_only():
    m = get_model("Mixtral 8x7B")
    base, more = explorables.moe_state(m.name), explorables.moe_state(m.name, n_experts=16)
    expert = model_parameters.gated_ffn_param_count(m.d_model, m.d_ff)
    # Each new expert and its router column, in every MoE layer; a token still runs two.
    assert more["stored"] - base["stored"] == m.n_moe_layers * 8 * (expert + m.d_model)
    assert more["active"] - base["active"] == m.n_moe_layers * 8 * m.d_model
    assert more["ffn_flops_layer"] == base["ffn_flops_layer"]
    assert more["ffn_flops_layer_every_expert"] == 2 * base["ffn_flops_layer_every_expert"]


def test_moe_flops_follow_the_active_experts():
    m = get_model("DeepSeek-V3")
    s = explorables.moe_state(m.name, experts_per_token=4, n_shared_experts=0)
    assert s["ffn_flops_layer"] == 2 * 3 * m.d_model * m.d_ff * 4
    dense = 2 * 3 * m.d_model * m.d_ff_dense
    assert s["ffn_flops_all_layers"] == m.n_moe_layers * s["ffn_flops_layer"] + m.n_dense_layers * dense


# --- compute ------------------------------------------------------------------------------------


def test_compute_state_is_the_books_formulas():
    gpt2 = get_model("GPT-2 small")
    s = explorables.compute_state(gpt2.name, 1024)
    assert s["ffn"] == compute.ffn_flops_per_token(gpt2.d_model, gpt2.d_ff)
    assert s["projections"] == compute.attention_projection_flops_per_token(gpt2.d_model, gpt2.n_heads)
    assert s["scores"] == compute.attention_score_flops_per_token(1024, gpt2.n_heads, d_model=gpt2.d_model)
    assert s["crossover"] == gpt2.d_ff  # classic FFN with full-width heads: n* = d_ff
    assert s["crossover_reached"] is True


def test_a_sliding_window_caps_the_scores():
    window = get_model("Mistral 7B").attention_window
    at_window = explorables.compute_state("Mistral 7B", window)
    beyond = explorables.compute_state("Mistral 7B", 8 * window)
    assert beyond["scores"] == at_window["scores"] and beyond["attended"] == window
    assert beyond["crossover"] > window and beyond["crossover_reached"] is False
    assert beyond["note"] == compute.model_crossover(get_model("Mistral 7B"))["note"]


def test_compute_state_says_where_the_crossover_lies_against_the_trained_context():
    for m in load_models():
        s = explorables.compute_state(m.name, 512)
        assert s["context_length"] == m.context_length
        if s["crossover"] is not None and m.context_length is not None:
            assert s["beyond_context"] == (s["crossover"] > m.context_length)


def test_compute_counts_palms_heads_at_their_own_width():
    # PaLM: 48 query heads of 256 (not d_model / 48), one key/value head (multi-query), SwiGLU at
    # d_ff = 4·d_model (arXiv:2204.02311, Table 1 and §2).
    palm = explorables.compute_state("PaLM 540B", 2048)
    d, h, d_head, d_ff = 18432, 48, 256, 73728
    assert palm["ffn"] == 2 * 3 * d * d_ff
    assert palm["projections"] == 2 * (d * h * d_head + 2 * d * d_head + h * d_head * d)
    assert palm["scores"] == 4 * 2048 * h * d_head
    assert palm["crossover"] == 2 * 3 * d * d_ff / (4 * h * d_head)


def test_compute_leaves_unknowns_empty():
    deepseek = explorables.compute_state("DeepSeek-V3", 2048)
    assert deepseek["projections"] is None and deepseek["scores"] > 0


# --- what pages ship ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", explorables.KINDS)
def test_data_is_json_and_deterministic(kind):
    first = json.dumps(explorables.explorable_data(kind), sort_keys=True)
    assert first == json.dumps(explorables.explorable_data(kind), sort_keys=True)
    data = json.loads(first)
    assert data["palette"] == list(PALETTE)
    assert data["initial"] == explorables.INITIAL[kind]


def test_data_covers_the_models_each_explorable_offers():
    assert sorted(explorables.explorable_data("parameters")["models"]) == BREAKDOWN_MODELS
    assert sorted(explorables.explorable_data("moe")["models"]) == sorted(m.name for m in load_models() if m.is_moe)
    assert len(explorables.explorable_data("compute")["models"]) == len(load_models())
    assert [r[0] for r in explorables.explorable_data("width")["models"]] == [r["model"] for r in width.width_rows()]


def test_compute_coefficients_scale_to_any_length():
    # The script multiplies the score cost of one position by the positions attended.
    for name, row in explorables.explorable_data("compute")["models"].items():
        for n in (1, 777, 50_000):
            state = explorables.compute_state(name, n)
            assert state["scores"] == (None if row["score"] is None else row["score"] * state["attended"])


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="kind must be one of"):
        explorables.explorable_data("attention")


def test_pages_with_an_explorable_depend_on_every_file_its_data_reads():
    """The directive computes its data while Sphinx reads the page, outside the page's kernel,
    so the execution records cannot see these files: the page must name them to Sphinx, or an
    edited formula or sheet row would leave an explorable showing old numbers."""
    from bookext.content.explorables import data_dependencies

    names = {p.name for p in data_dependencies()}
    assert {"explorables.py", "compute.py", "model_parameters.py", "models.py", "width.py", "models.csv"} <= names
    assert "trained_ffn.py" not in names  # only what the data needs
    # Every ffnbook module that computing the data imports, in a fresh process, is among them.
    script = (
        "import sys, ffnbook.explorables as x\n"
        "[x.explorable_data(k) for k in x.KINDS]\n"
        "print('\\n'.join(m.__file__ for n, m in sys.modules.items() if n.startswith('ffnbook')))"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    imported = {Path(line).resolve() for line in run.stdout.split()}
    assert imported and imported <= {p.resolve() for p in data_dependencies()}
