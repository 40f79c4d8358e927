"""What every public callable of ffnbook accepts: the declarations the contract test walks.

For each public function, class and method, :func:`resolve` needs

* a valid call: ``Case.args`` builds the arguments that have no default (or
  that need particular values), fresh for every call;
* the kind of each parameter (:mod:`contract`): looked up in ``Case.kinds``,
  then by name in :data:`NAME_KINDS`, then from a ``bool``/``float``
  annotation. A parameter with none of these fails the test, which asks for a
  declaration here;
* for a bundle (``params``, ``memories``...), ``Case.aliases``: the names
  of its parts an error may use instead.

A new public function with only sizes, seeds, flags and numbers named as in
:data:`NAME_KINDS` needs no entry at all; one taking arrays or objects needs a
``Case`` with valid ``args``. NamedTuples are records (:data:`RECORDS`): the
functions that consume them check their fields.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

import numpy as np
from contract import (
    Array,
    Bundle,
    Choice,
    Count,
    DType,
    Flag,
    Func,
    Index,
    IndexArray,
    Kind,
    Mapping,
    Names,
    Number,
    Obj,
    Positive,
    Rows,
    Seed,
    SeqOf,
    Shape,
    Size,
    Tensor,
    Text,
)

# --- parameter kinds by name ---------------------------------------------------------------------

SIZE, COUNT, INDEX, SEED, FLAG = Size(), Count(), Index(), Seed(), Flag()
ARRAY, ANY_ARRAY = Array(), Array(finite=False, fixed=False)
FREE_ARRAY = Array(fixed=False)  #: finite, any shape (each position or row on its own)
POSITIONS = IndexArray(bounded=False)
POSITIVE = Positive()

#: The kind of a parameter, by its name, wherever the name is used in ffnbook.
NAME_KINDS: dict[str, Kind] = {
    **dict.fromkeys(
        (
            "d_model",
            "d_ff",
            "n_heads",
            "d_head",
            "d_attn",
            "n_ctx",
            "n_active",
            "n_experts",
            "top_k",
            "n_tokens",
            "n_layers",
            "n_params",
            "vocab",
            "vocab_size",
            "seq_len",
            "n_positions",
            "n_blocks",
            "n_relations",
            "n_objects",
            "n_filler",
            "n_times",
            "n_contexts",
            "n_rows",
            "n_memories",
            "batch",
            "batch_size",
            "repeats",
            "steps",
            "eval_every",
            "eval_contexts",
            "threads",
            "d_out",
            "nhead",
            "n",
            "copy_mib",
            "bins",
            "min_len",
            "multiple_of",
            "n_promoted",
            "n_facts",
            "k",
            "q_lora_rank",
            "kv_lora_rank",
            "qk_nope_head_dim",
            "qk_rope_head_dim",
            "v_head_dim",
            "d_ff_classic",
            "n_subjects",
            "n_devices",
            "d_key",
            "slots",
            "d_in",
            "n_outliers",
        ),
        SIZE,
    ),
    **dict.fromkeys(("n_kv_heads", "d_head_v"), SIZE.optional()),
    **dict.fromkeys(("n_held_out", "ffn_sublayers", "attention_sublayers", "start"), COUNT),
    **dict.fromkeys(("position", "slot", "feature", "edited_position", "output_position", "index", "block"), INDEX),
    "seed": SEED,
    **dict.fromkeys(
        ("bias", "gated", "causal", "include_moe", "answer_only", "tied", "return_weights", "fused", "mup"), FLAG
    ),
    "cross_attention": FLAG.optional(),
    "tied_head": FLAG.optional(),
    "eps": Number(low=0),
    **dict.fromkeys(
        (
            "step",
            "speed",
            "alpha",
            "capacity_factor",
            "ratio",
            "ffn_ratio",
            "attn_ratio",
            "params_per_layer",
            "classic_multiple",
            "ffn_flops",
            "width",
            "height",
            "base",
        ),
        POSITIVE,
    ),
    "ffn_dim_multiplier": POSITIVE.optional(),
    "threshold": Number(0, 1, low_open=True, high_open=True),
    "noise": Number(low=0),
    "p": Number(0, 1, low_open=True, high_open=True),
    "dropout": Number(0, 1, high_open=True),
    "strong": Number(0, 1, low_open=True),
    "kv_fraction": Number(0, 1, low_open=True),
    "chance": Number(0, 1, low_open=True),
    "learning_rate": Number(0, 1, low_open=True, high_open=True),
    "weight_decay": Number(low=0),
    "level": Number(),
    "lo": Number(),
    "hi": Number(),
    "value": Number(),
    **dict.fromkeys(
        ("activation", "norm", "method", "scheme", "kind", "which", "part", "ffn_type", "name", "key"), Choice()
    ),
    "dtype": DType(),
    **dict.fromkeys(
        (
            "x",
            "t",
            "q",
            "v",
            "W1",
            "b1",
            "W2",
            "b2",
            "W",
            "V",
            "W_router",
            "logits",
            "keys",
            "values",
            "queries",
            "output",
            "new_value",
            "terms",
            "matrix",
            "y",
            "running_mean",
            "running_var",
            "x_sequence",
            "x_batch",
            "value_scores",
            "expected",
            "a",
            "b",
        ),
        ARRAY,
    ),
    **dict.fromkeys(("selection_bias", "score_bias", "gain"), ARRAY.optional()),
    **dict.fromkeys(
        ("positions", "token_ids", "tokens", "facts", "answers", "object_tokens", "perm", "train_facts"), IndexArray()
    ),
    "held_out_facts": IndexArray().optional(),
    "layer": Func(),
    "rng": Obj("numpy Generator"),
    **dict.fromkeys(("routing", "world", "prompts", "timing", "config", "model_config", "train_config"), Obj()),
    **dict.fromkeys(("params", "attn_params", "ffn_params", "memories"), Bundle("bundle of arrays")),
    **dict.fromkeys(("names", "dtypes", "schemes", "kinds"), Names()),
    **dict.fromkeys(("seq_lens", "widths", "contexts"), SeqOf(SIZE)),
    "seeds": SeqOf(SEED),
    **dict.fromkeys(("multipliers", "ffn_ratios", "memory_ratios", "capacity_factors"), SeqOf(POSITIVE)),
    "noise_levels": SeqOf(Number(low=0)),
    "starts": POSITIONS,
    "positions": POSITIONS,
    **dict.fromkeys(("rows", "readings", "spills", "results", "settings", "load", "load_before", "load_after"), Rows()),
    **dict.fromkeys(("influences", "history", "scales"), Mapping()),
}

#: Names an error may use for a bundle parameter, beside the parameter's own name.
ALIASES = {
    # arrays whose shapes are tied together: a mismatch may be reported by the other one
    **{n: ("W1", "b1", "W2", "b2") for n in ("W1", "b1", "W2", "b2")},
    **{n: ("W", "V", "W2") for n in ("W", "V")},
    "params": ("W1", "b1", "W2", "b2", "W", "V", "Wq", "Wk", "Wv", "Wo", "W_router", "expert"),
    "ffn_params": ("W1", "b1", "W2", "b2"),
    "attn_params": ("Wq", "Wk", "Wv", "Wo"),
    "memories": ("keys", "values"),
    "x_sequence": ("x",),
}


@dataclasses.dataclass
class Case:
    """How to call one public callable validly, and what its parameters are."""

    args: Callable[[], dict] | None = None  #: valid arguments by name (fresh on every call)
    kinds: dict = dataclasses.field(default_factory=dict)  #: parameter -> Kind (None: not generated)
    aliases: dict = dataclasses.field(default_factory=dict)
    target: Callable | None = None  #: for methods and instances: a factory of the callable
    why: str = ""  #: why parameters (or the whole callable) are left out
    seconds: float = 20.0  #: time limit of one call
    deterministic: bool = True  #: False for timings and random initialisations: no "same result" check


#: NamedTuples: records of results or of inputs, checked by the functions that read them.
RECORDS = "record: a NamedTuple of values, checked by the functions that read it"

# --- valid example values --------------------------------------------------------------------------


def _ffn():
    from ffnbook.feedforward import init_ffn_params

    return init_ffn_params(4, 8, seed=0)


def _x(*shape, seed=1):
    from ffnbook.position_independence import random_tokens

    return random_tokens(shape or (3, 4), seed=seed)


def _gated():
    from ffnbook.gated import init_gated_params

    return init_gated_params(4, 6, seed=0)


def _attn():
    from ffnbook.attention import init_attention_params

    return init_attention_params(4, seed=0)


def _moe():
    from ffnbook.moe import init_moe_params

    return init_moe_params(4, 8, 3, seed=0)


def _routing():
    from ffnbook.moe import route

    p = _moe()
    return route(_x(6, 4), p.W_router, 2)


def _product_keys():
    from ffnbook.memory_layers import random_product_keys

    return random_product_keys(4, 6)


def _model(name="GPT-2 small"):
    from ffnbook.models import get_model

    return get_model(name)


def _memories():
    from ffnbook.memory import random_memories

    return random_memories(4, 8, seed=0)


def _world():
    from ffnbook.facts import make_world

    return make_world(3, 2, 4, n_filler=4, seed=0)


def _prompts():
    from ffnbook.facts import fact_prompts

    w = _world()
    return fact_prompts(w, w.all_facts(), 2, 5, seed=1)


@functools.lru_cache(maxsize=1)
def _tiny_transformer_state():
    import torch

    from ffnbook.tiny_transformer import ModelConfig, TinyTransformer

    torch.manual_seed(0)
    model = TinyTransformer(ModelConfig(vocab_size=_world().vocab_size, seq_len=5, d_model=8, n_heads=2, d_ff=16))
    return model.config, model.state_dict()


def _transformer():
    from ffnbook.tiny_transformer import TinyTransformer

    config, state = _tiny_transformer_state()
    model = TinyTransformer(config)
    model.load_state_dict(state)
    return model.eval()


def _tiny_model():
    from ffnbook.positional import tiny_model

    return tiny_model(vocab=10, d_model=8, d_ff=16, n_heads=2, n_positions=16, seed=0)


def _timing():
    from ffnbook.compute import TimingResult

    return TimingResult([256, 512, 1024], [1.0, 2.0, 4.0], [0.5, 2.5, 12.0], 8, 32, 2)


def _tensor(*shape):
    import torch

    return torch.zeros(*shape, dtype=torch.float32) + 0.5


def _tokens():
    import torch

    return torch.zeros(2, 5, dtype=torch.long)


def _readings():
    from ffnbook.trained_ffn import read_neurons

    acts = np.array([[2.0, 0.0], [0.1, 1.0], [0.0, 1.0]])
    facts = np.array([[0, 0], [0, 1], [1, 1]])
    return read_neurons(acts, facts, np.array([0, 1, 0]), np.array([[3.0, 0.0], [0.0, 1.0]]), np.array([0, 1]))


def _history():
    return {
        "step": [0, 1, 2],
        "loss": [None, 2.0, 1.0],
        "recall": [0.25, 0.5, 0.75],
        "held_out_recall": [0.25, 0.25, 0.25],
        "active_share": [[0.5, 0.4, 0.3], [0.5, 0.5, 0.4]],
    }


def _train_config():
    from ffnbook.tiny_transformer import TrainConfig

    return TrainConfig(steps=2, batch_size=4, eval_every=1, eval_contexts=1)


def _ablation_rows():
    return [
        {"part": "none", "blocks": (), "method": "none", "recall": 1.0},
        {"part": "ffn", "blocks": (0,), "method": "zero", "recall": 0.5},
        {"part": "attention", "blocks": (0,), "method": "mean", "recall": 0.25},
    ]


@functools.lru_cache(maxsize=1)
def _studies_cached():
    from ffnbook.trained_ffn import ablation_study

    return [ablation_study(_transformer(), _world(), _prompts())]


def _studies():
    import copy

    return copy.deepcopy(_studies_cached())


def _donors():
    from ffnbook.facts import other_answer_facts, swap_facts

    w, p = _world(), _prompts()
    return swap_facts(w, p, other_answer_facts(w, p.facts, seed=0))


@functools.lru_cache(maxsize=1)
def _patching_cached():
    from ffnbook.trained_ffn import patching_study

    return patching_study(_transformer(), _world(), _prompts(), _donors(), ("subject", "query"))


def _patching():
    import copy

    return copy.deepcopy(_patching_cached())


@functools.lru_cache(maxsize=1)
def _train_results():
    from ffnbook.tiny_transformer import train_on_facts

    w = _world()
    return [train_on_facts(w, w.all_facts(), _transformer().config, _train_config())]


def _shares():
    from ffnbook.trained_ffn import active_share_by_site

    return [active_share_by_site(_transformer(), _prompts())]


def _capacity_rows():
    history = {"step": [0, 1, 2], "loss": [None, 2.0, 1.0], "recall": [0.25, 0.5, 0.75]}
    return [{"d_ff": w, "n_facts": 4, "seed": 0, "recall": 0.5 + w / 32, "history": history} for w in (0, 8)]


def _baseline():
    from ffnbook.controls import fit_additive_baseline

    return fit_additive_baseline(_world(), _world().all_facts())


def _replicas():
    from ffnbook.tiny_transformer import Replica

    w = _world()
    return [Replica(w, w.all_facts()[:4], 0), Replica(w, w.all_facts()[:4], 1, None, 0)]


def _spill():
    from ffnbook.memory import edit_spill

    m = _memories()
    return edit_spill(m, 1, m.values[2])


FFN_ARGS = lambda: dict(x=_x(), params=_ffn())  # noqa: E731
BUNDLE_FFN = Bundle("FFNParams")

#: How to call each public callable that needs more than its defaults and NAME_KINDS.
CASES: dict[str, Case] = {
    # activations and their slopes
    **{
        f"ffnbook.activations.{n}": Case(lambda: dict(x=_x()), kinds={"x": ANY_ARRAY})
        for n in ("relu", "gelu", "gelu_tanh", "silu", "identity", "sigmoid")
    },
    **{
        f"ffnbook.derivatives.{n}_derivative": Case(lambda: dict(x=_x()), kinds={"x": ANY_ARRAY})
        for n in ("relu", "gelu", "gelu_tanh", "silu", "identity")
    },
    "ffnbook.activations.get_activation": Case(lambda: dict(name="relu"), aliases={"name": ("activation",)}),
    "ffnbook.derivatives.get_derivative": Case(lambda: dict(name="relu"), aliases={"name": ("activation",)}),
    "ffnbook.derivatives.finite_difference_error": Case(
        lambda: dict(name="gelu", n=101), aliases={"name": ("activation",)}
    ),
    "ffnbook.derivatives.autograd_error": Case(lambda: dict(name="gelu", n=101), aliases={"name": ("activation",)}),
    "ffnbook.tanh_approximation.tanh_minus_exact": Case(lambda: dict(x=_x()), kinds={"x": ANY_ARRAY}),
    "ffnbook.tanh_approximation.tanh_approximation_error": Case(lambda: dict(n=1001)),
    "ffnbook.tanh_approximation.tanh_error_shape": Case(lambda: dict(n=1001)),
    "ffnbook.activation_figures.tanh_error_curve": Case(lambda: dict(n=1001)),
    # the FFN
    "ffnbook.feedforward.FFNParams.astype": Case(lambda: dict(dtype=np.float32), target=lambda: _ffn().astype),
    "ffnbook.feedforward.check_params": Case(lambda: dict(_ffn()._asdict())),
    "ffnbook.feedforward.init_ffn_params": Case(lambda: dict(d_model=4, d_ff=8)),
    "ffnbook.feedforward.check_input": Case(
        lambda: dict(x=_x(), d_model=4, dtype=np.dtype(np.float64)),
        kinds={"name": None},
        why="name: the label used in messages",
    ),
    "ffnbook.feedforward.ffn_params_of": Case(
        lambda: dict(params=_ffn()), kinds={"name": None}, why="name: the caller's name for params, used in messages"
    ),
    "ffnbook.feedforward.ffn": Case(lambda: dict(x=_x(), **_ffn()._asdict())),
    "ffnbook.feedforward.collapse_linear_ffn": Case(lambda: dict(_ffn()._asdict())),
    "ffnbook.anatomy.shape_trace": Case(FFN_ARGS),
    "ffnbook.anatomy.shape_trace_table": Case(FFN_ARGS),
    "ffnbook.anatomy.hidden_layer": Case(FFN_ARGS),
    "ffnbook.anatomy.active_fraction": Case(FFN_ARGS),
    "ffnbook.anatomy.hidden_layer_figure": Case(lambda: dict(x=_x(), params=_ffn(), bins=10)),
    "ffnbook.anatomy.conv1d_equivalence_max_diff": Case(lambda: dict(params=_ffn(), x=_x(2, 3, 4))),
    # gated
    "ffnbook.gated.get_gate_activation": Case(lambda: dict(name="silu"), aliases={"name": ("activation",)}),
    "ffnbook.gated.GatedParams.astype": Case(lambda: dict(dtype=np.float32), target=lambda: _gated().astype),
    "ffnbook.gated.gated_params_of": Case(
        lambda: dict(params=_gated()), kinds={"name": None}, why="name: the caller's name for params, used in messages"
    ),
    "ffnbook.gated.check_gated_params": Case(lambda: dict(_gated()._asdict())),
    "ffnbook.gated.init_gated_params": Case(lambda: dict(d_model=4, d_ff=6)),
    "ffnbook.gated.gated_ffn": Case(lambda: dict(x=_x(), **_gated()._asdict())),
    "ffnbook.gated.gated_layer": Case(lambda: dict(params=_gated())),
    "ffnbook.gated.hidden_values": Case(lambda: dict(x=_x(), params=_gated())),
    "ffnbook.gated.parameter_budget_figure": Case(lambda: dict(d_model=8, d_ff_classic=12)),
    "ffnbook.gated.gate_histogram_figure": Case(lambda: dict(x=_x(), params=_gated())),
    "ffnbook.memory_layers.random_product_keys": Case(lambda: dict(n=4, d_key=6)),
    "ffnbook.memory_layers.product_key_topk": Case(
        lambda: dict(query=np.linspace(-1, 1, 6), keys=_product_keys(), k=2),
        kinds={"query": ARRAY, "keys": Obj("ProductKeys")},
    ),
    "ffnbook.memory_layers.exhaustive_topk": Case(
        lambda: dict(query=np.linspace(-1, 1, 6), keys=_product_keys(), k=2),
        kinds={"query": ARRAY, "keys": Obj("ProductKeys")},
    ),
    "ffnbook.memory_layers.memory_layer_cost": Case(lambda: dict(n=8, d_key=4, d_model=8, k=2)),
    "ffnbook.memory_layers.dense_memory_cost": Case(lambda: dict(slots=64, d_model=8)),
    "ffnbook.mup.first_step_output_change": Case(lambda: dict(d_model=4, d_ff=8, learning_rate=1e-3)),
    "ffnbook.mup.width_sweep": Case(lambda: dict(d_model=4, widths=[8, 16], learning_rate=1e-3, mup=True)),
    "ffnbook.compression.quantize": Case(
        lambda: dict(x=np.array([[0.5, -1.0], [0.2, 0.1]]), bits=8),
        kinds={"x": FREE_ARRAY, "bits": SIZE, "axis": None},
        why="axis: None, 0 or 1 (checked by hand in tests/test_compression.py)",
    ),
    "ffnbook.compression.outlier_features": Case(lambda: dict(d_in=8, n_outliers=2)),
    "ffnbook.compression.outlier_inputs": Case(
        lambda: dict(n_tokens=4, d_in=8, n_outliers=2, outlier_scale=10.0), kinds={"outlier_scale": POSITIVE}
    ),
    "ffnbook.compression.smoothing_scales": Case(
        lambda: dict(x=np.ones((3, 4)), W=np.ones((4, 2))), kinds={"W": FREE_ARRAY, "alpha": Number(0, 1)}
    ),
    "ffnbook.compression.relative_error": Case(
        lambda: dict(approximate=np.ones((2, 2)), exact=np.ones((2, 2))),
        kinds={"approximate": ARRAY, "exact": ARRAY},
    ),
    "ffnbook.compression.w8a8_error": Case(
        lambda: dict(x=np.ones((3, 4)), W=np.ones((4, 2))),
        kinds={"W": FREE_ARRAY, "smooth": FLAG, "alpha": Number(0, 1), "bits": SIZE},
    ),
    "ffnbook.compression.prune": Case(
        lambda: dict(W=np.ones((4, 2)), x=np.ones((3, 4))),
        kinds={"W": FREE_ARRAY, "score": Choice(), "pattern": Choice()},
    ),
    "ffnbook.capacity.bits_per_fact": Case(lambda: dict(n_objects=32)),
    "ffnbook.capacity.knowledge_bits": Case(lambda: dict(n_facts=10, n_objects=32), kinds={"n_facts": COUNT}),
    "ffnbook.capacity.bits_per_parameter": Case(
        lambda: dict(n_facts=10, n_objects=32, n_params=100), kinds={"n_facts": COUNT}
    ),
    "ffnbook.capacity.facts_at_capacity": Case(
        lambda: dict(n_params=100, n_objects=32), kinds={"bits_per_param": POSITIVE}
    ),
    "ffnbook.parallel.shard_ffn": Case(lambda: dict(params=_ffn(), n_devices=2)),
    "ffnbook.parallel.tensor_parallel_ffn": Case(lambda: dict(x=_x(), params=_ffn(), n_devices=2)),
    "ffnbook.parallel.row_split_ffn": Case(lambda: dict(x=_x(), params=_ffn(), n_devices=2)),
    "ffnbook.parallel.pack_gate_up": Case(
        lambda: dict(params=_gated(), packing="interleaved"), kinds={"packing": Choice()}
    ),
    "ffnbook.parallel.tensor_parallel_gated_ffn": Case(
        lambda: dict(x=_x(), params=_gated(), n_devices=2), kinds={"packing": Choice().optional()}
    ),
    "ffnbook.parallel.ring_all_reduce": Case(
        lambda: dict(vectors=np.arange(12.0).reshape(3, 4)), kinds={"vectors": FREE_ARRAY}
    ),
    "ffnbook.parallel.tensor_parallel_cost": Case(
        lambda: dict(model=_model(), n_devices=2), kinds={"model": Obj("ModelConfig"), "dtype": Choice()}
    ),
    "ffnbook.parallel.glu_elementwise_values": Case(lambda: dict(d_ff=8, fused=True)),
    "ffnbook.parallel.split_equals_whole": Case(lambda: dict(x=_x(), params=_ffn(), n_devices=2)),
    "ffnbook.parallel.gated_split_error": Case(
        lambda: dict(x=_x(), params=_gated(), n_devices=2), kinds={"packing": Choice().optional()}
    ),
    "ffnbook.gated_torch.GatedFFN": Case(lambda: dict(d_model=4, d_ff=6)),
    "ffnbook.gated_torch.GatedFFN.forward": Case(
        lambda: dict(x=_tensor(2, 4)), kinds={"x": Tensor()}, target=lambda: _torch_module("gated").forward
    ),
    "ffnbook.gated_torch.GatedFFN.from_numpy": Case(lambda: dict(params=_gated())),
    "ffnbook.gated_torch.meta_gated_ffn": Case(lambda: dict(d_model=4, d_ff=6)),
    "ffnbook.gated_torch.meta_classic_ffn": Case(lambda: dict(d_model=4, d_ff=6)),
    "ffnbook.gated_torch.numpy_torch_max_diff": Case(lambda: dict(x=_x(), params=_gated())),
    # parameters and widths
    "ffnbook.parameters.ffn_param_count": Case(lambda: dict(d_model=8, d_ff=32)),
    "ffnbook.parameters.gated_ffn_param_count": Case(lambda: dict(d_model=8, d_ff=32)),
    "ffnbook.parameters.equal_parameter_width": Case(lambda: dict(d_ff_classic=3072), kinds={"d_ff_classic": POSITIVE}),
    "ffnbook.parameters.ffn_weights_in_d2": Case(lambda: dict(d_ff=32, d_model=8, gated=False)),
    "ffnbook.parameters.attention_param_count": Case(
        lambda: dict(d_model=8, n_heads=2), kinds={"d_head": SIZE.optional()}
    ),
    "ffnbook.parameters.count_module_parameters": Case(
        lambda: dict(module=_torch_module("ffn")), kinds={"module": Obj("torch module")}
    ),
    "ffnbook.parameters.block_modules": Case(lambda: dict(d_model=8, d_ff=16, n_heads=2)),
    "ffnbook.parameters.width_ratio_rows": Case(lambda: dict(d_model=8)),
    "ffnbook.parameters.width_ratio_table": Case(lambda: dict(d_model=8)),
    "ffnbook.width.llama_ffn_width": Case(lambda: dict(d_model=4096)),
    "ffnbook.width.llama_width_rows": Case(kinds={"settings": Rows().optional()}),
    "ffnbook.width.llama_width_table": Case(kinds={"settings": Rows().optional()}),
    "ffnbook.width.width_counts": Case(kinds={"rows": Rows().optional()}),
    "ffnbook.width.excess_over_classic_budget": Case(lambda: dict(d_ff=2048, d_model=768)),
    "ffnbook.width.d_model_at_fixed_budget": Case(lambda: dict(params_per_layer=12 * 768**2, ffn_ratio=4.0)),
    "ffnbook.width.fixed_budget_rows": Case(lambda: dict(params_per_layer=12 * 768**2)),
    "ffnbook.width.fixed_budget_table": Case(lambda: dict(params_per_layer=12 * 768**2)),
    "ffnbook.width.gated_budget": Case(lambda: dict(d_model=768)),
    "ffnbook.explorables.width_d_ff": Case(lambda: dict(d_model=512, ratio=4.0, gated=True, multiple_of=256)),
    "ffnbook.explorables.width_state": Case(lambda: dict(d_model=512, ratio=4.0, gated=False)),
    "ffnbook.explorables.model_variant": Case(
        lambda: dict(model="Mixtral 8x7B"),
        kinds={
            "model": Choice(),
            **dict.fromkeys(
                ("n_layers", "d_model", "vocab_size", "n_experts", "experts_per_token", "d_ff"), SIZE.optional()
            ),
            "n_kv_heads": SIZE.optional(),
            "n_shared_experts": COUNT.optional(),
        },
    ),
    "ffnbook.explorables.parameter_state": Case(lambda: dict(model="GPT-2 small"), kinds={"model": Choice()}),
    "ffnbook.explorables.moe_state": Case(lambda: dict(model="Mixtral 8x7B"), kinds={"model": Choice()}),
    "ffnbook.explorables.compute_state": Case(lambda: dict(model="GPT-2 small", n_ctx=1024), kinds={"model": Choice()}),
    "ffnbook.explorables.explorable_data": Case(lambda: dict(kind="width")),
    # attention, blocks, positions
    "ffnbook.attention.init_attention_params": Case(lambda: dict(d_model=4)),
    "ffnbook.attention.split_heads": Case(lambda: dict(t=_x(2, 3, 4), n_heads=2), kinds={"t": Array(finite=False)}),
    "ffnbook.attention.merge_heads": Case(lambda: dict(t=_x(2, 3, 2)), kinds={"t": ANY_ARRAY}),
    "ffnbook.attention.attend": Case(
        lambda: dict(q=_x(2, 3, 2), k=_x(2, 3, 2, seed=2), v=_x(2, 3, 2, seed=3)),
        kinds={"k": ARRAY, "v": FREE_ARRAY},
        aliases={"q": ("k", "v"), "k": ("q", "v"), "v": ("q", "k")},
    ),
    "ffnbook.attention.check_attention_params": Case(
        lambda: dict(params=_attn(), n_heads=2),
        kinds={"name": None},
        why="name: the caller's name for params, used in messages",
    ),
    "ffnbook.attention.self_attention": Case(lambda: dict(x=_x(), params=_attn(), n_heads=2)),
    "ffnbook.block.layer_norm": Case(
        lambda: dict(x=_x()),
        kinds={"x": FREE_ARRAY, "bias": ARRAY.optional(), "gain": ARRAY.optional(), "eps": POSITIVE},
    ),
    "ffnbook.block.transformer_block": Case(
        lambda: dict(x=_x(), attn_params=_attn(), ffn_params=_ffn(), n_heads=2), kinds={"eps": POSITIVE}
    ),
    "ffnbook.block.block_layer": Case(lambda: dict(attn_params=_attn(), ffn_params=_ffn(), n_heads=2)),
    "ffnbook.block.sublayer_parameters": Case(lambda: dict(d_model=8, d_ff=32, n_heads=2)),
    "ffnbook.block.compare_norm_placements": Case(
        lambda: dict(x=_x(), attn_params=_attn(), ffn_params=_ffn(), n_heads=2)
    ),
    "ffnbook.block.influence_matrix": Case(lambda: dict(layer=lambda t: 2 * t, x=_x()), kinds={"x": FREE_ARRAY}),
    "ffnbook.block.summarize_influence": Case(
        lambda: dict(matrix=np.array([[2.0, 1.0], [0.0, 2.0]])), kinds={"matrix": Array(fixed=False)}
    ),
    "ffnbook.block.block_influences": Case(lambda: dict(x=_x(), attn_params=_attn(), ffn_params=_ffn(), n_heads=2)),
    "ffnbook.block.influence_figure": Case(
        lambda: dict(influences={k: np.eye(3) for k in ("attention", "ffn", "block")})
    ),
    "ffnbook.positional.sinusoidal_table": Case(lambda: dict(n_positions=4, d_model=6)),
    "ffnbook.positional.learned_table": Case(lambda: dict(n_positions=4, d_model=6)),
    "ffnbook.positional.rope": Case(lambda: dict(t=_x(3, 4), positions=[0, 1, 2])),
    "ffnbook.positional.alibi_slopes": Case(lambda: dict(n_heads=4)),
    "ffnbook.positional.alibi_bias": Case(lambda: dict(positions=[0, 1, 2], n_heads=2)),
    "ffnbook.positional.tiny_model": Case(lambda: dict(vocab=10, d_model=8, d_ff=16, n_heads=2, n_positions=16)),
    "ffnbook.positional.first_ffn_output": Case(
        lambda: dict(model=_tiny_model(), token_ids=[1, 2, 3], start=2, method="learned"),
        kinds={"model": Obj("TinyModel")},
    ),
    "ffnbook.positional.shift_experiment": Case(
        lambda: dict(model=_tiny_model(), token_ids=[1, 2, 3], starts=[0, 1, 2], method="rope"),
        kinds={"model": Obj("TinyModel")},
    ),
    "ffnbook.positional.shift_figure": Case(
        lambda: dict(
            results=[
                __import__("ffnbook.positional", fromlist=["ShiftResult"]).ShiftResult("rope", [0, 1], [0.5, 0.5], 0.0)
            ]
        )
    ),
    "ffnbook.normalisation.rms_norm": Case(lambda: dict(x=_x()), kinds={"x": FREE_ARRAY}),
    "ffnbook.normalisation.batch_norm_train": Case(lambda: dict(x=_x()), kinds={"x": FREE_ARRAY}),
    "ffnbook.normalisation.batch_norm_eval": Case(
        lambda: dict(x=_x(), running_mean=np.zeros(4), running_var=np.ones(4)),
        aliases={"x": ("running_mean", "running_var"), "running_mean": ("x",), "running_var": ("x",)},
    ),
    "ffnbook.normalisation.position_tests": Case(
        lambda: dict(layer=lambda t: 2 * t, x_sequence=_x(), x_batch=_x(2, 3, 4))
    ),
    "ffnbook.normalisation.normalisation_layers": Case(lambda: dict(d_model=4)),
    "ffnbook.normalisation.position_test_rows": Case(lambda: dict(x_sequence=_x(), x_batch=_x(2, 3, 4))),
    "ffnbook.normalisation.position_test_table": Case(lambda: dict(x_sequence=_x(), x_batch=_x(2, 3, 4))),
    # position independence
    "ffnbook.position_independence.ffn_layer": Case(lambda: dict(params=_ffn())),
    "ffnbook.position_independence.attention_layer": Case(lambda: dict(params=_attn(), n_heads=2)),
    "ffnbook.position_independence.random_tokens": Case(lambda: dict(shape=(2, 3)), kinds={"shape": Shape()}),
    "ffnbook.position_independence.batch_vs_rows_max_diff": Case(
        lambda: dict(layer=lambda t: 2 * t, x=_x()), kinds={"x": FREE_ARRAY}
    ),
    "ffnbook.position_independence.reshape_max_diff": Case(
        lambda: dict(layer=lambda t: 2 * t, x=_x(2, 3, 4)), kinds={"x": FREE_ARRAY}
    ),
    "ffnbook.position_independence.permutation_max_diff": Case(
        lambda: dict(layer=lambda t: 2 * t, x=_x(), perm=[2, 0, 1]), kinds={"x": FREE_ARRAY}
    ),
    "ffnbook.position_independence.movement_by_position": Case(
        lambda: dict(layer=lambda t: 2 * t, x=_x(), position=1), kinds={"x": FREE_ARRAY}
    ),
    "ffnbook.position_independence.change_one_token": Case(
        lambda: dict(layer=lambda t: 2 * t, x=_x(), position=1), kinds={"x": FREE_ARRAY}
    ),
    "ffnbook.position_independence.rounding_gap": Case(
        lambda: dict(a=np.array([1.0, 2.0]), b=np.array([1.0, 2.0 + 2**-51]), terms=np.array([1.0, 2.0]))
    ),
    "ffnbook.position_independence.ffn_rounding_gap": Case(FFN_ARGS),
    "ffnbook.position_independence.rounding_sweep": Case(
        lambda: dict(d_model=4, d_ff=8, seq_lens=[3, 4], seeds=[0, 1])
    ),
    "ffnbook.position_independence.summation_orders": Case(
        lambda: dict(values=[1.0, 1e-16, -1.0]), kinds={"values": Array(fixed=False)}
    ),
    # nonlinearity
    "ffnbook.nonlinearity.best_affine_fit": Case(
        lambda: dict(x=_x(10, 3), y=np.abs(_x(10, 2, seed=5))), kinds={"x": FREE_ARRAY, "y": FREE_ARRAY}
    ),
    "ffnbook.nonlinearity.affine_fit_by_activation": Case(lambda: dict(x=_x(12, 4), params=_ffn())),
    # mixture of experts
    "ffnbook.moe.init_moe_params": Case(lambda: dict(d_model=4, d_ff=8, n_experts=3)),
    "ffnbook.moe.check_moe_params": Case(lambda: dict(params=_moe())),
    "ffnbook.moe.route": Case(
        lambda: dict(x=_x(6, 4), W_router=_moe().W_router, top_k=2),
        kinds={"W_router": FREE_ARRAY},
        aliases={"W_router": ("x",)},
    ),
    "ffnbook.moe.route_logits": Case(lambda: dict(logits=_x(6, 3), top_k=2), kinds={"logits": FREE_ARRAY}),
    "ffnbook.moe.moe_layer": Case(lambda: dict(x=_x(6, 4), params=_moe())),
    "ffnbook.moe.moe_as_layer": Case(lambda: dict(params=_moe())),
    "ffnbook.moe.expert_load": Case(lambda: dict(routing=_routing(), n_experts=3), kinds={"routing": Obj("Routing")}),
    "ffnbook.moe.routing_change_one_token": Case(lambda: dict(params=_moe(), x=_x(6, 4), position=1)),
    "ffnbook.moe.moe_param_counts": Case(lambda: dict(d_model=8, d_ff=32, n_experts=4, top_k=2)),
    "ffnbook.moe.count_stored_parameters": Case(lambda: dict(params=_moe())),
    "ffnbook.moe.expert_load_figure": Case(lambda: dict(load=[3, 5, 4], top_k=2), kinds={"load": SeqOf(COUNT)}),
    "ffnbook.moe.expert_capacity": Case(lambda: dict(n_tokens=256, n_experts=8, capacity_factor=1.25, top_k=2)),
    "ffnbook.moe.apply_capacity": Case(
        lambda: dict(routing=_routing(), n_experts=3, capacity=3), kinds={"capacity": COUNT}
    ),
    "ffnbook.moe.dropped_by_capacity": Case(lambda: dict(routing=_routing(), n_experts=3, capacity_factors=[1.0, 2.0])),
    "ffnbook.moe.switch_balance_loss": Case(lambda: dict(logits=_x(6, 3)), kinds={"logits": FREE_ARRAY}),
    "ffnbook.moe.capacity_drop_change": Case(lambda: dict(params=_moe(), x=_x(2, 8, 4), position=0)),
    "ffnbook.moe.bias_balancing": Case(lambda: dict(logits=_x(8, 3), top_k=1, steps=20), kinds={"logits": FREE_ARRAY}),
    "ffnbook.moe.balancing_figure": Case(
        lambda: dict(load_before=[6, 1, 1], load_after=[3, 3, 2], capacity=3, top_k=1),
        kinds={"load_before": SeqOf(COUNT), "load_after": SeqOf(COUNT), "capacity": SIZE},
    ),
    # compute, inference, models
    "ffnbook.compute.ffn_flops_per_token": Case(lambda: dict(d_model=8, d_ff=32)),
    "ffnbook.compute.attention_projection_flops_per_token": Case(
        lambda: dict(d_model=8, n_heads=2), kinds={"d_head": SIZE.optional()}
    ),
    "ffnbook.compute.attention_score_flops_per_token": Case(
        lambda: dict(n_ctx=16, n_heads=2, d_model=8), kinds={"d_model": SIZE.optional(), "d_head": SIZE.optional()}
    ),
    "ffnbook.compute.crossover_length": Case(lambda: dict(ffn_flops=1000, n_heads=2, d_head=4)),
    "ffnbook.compute.softmax_scores_per_token": Case(lambda: dict(n_ctx=16, n_heads=2)),
    "ffnbook.compute.softmax_share_of_score_flops": Case(lambda: dict(d_head=64)),
    "ffnbook.compute.kaplan_context_ratio": Case(
        lambda: dict(n_ctx=1024, d_model=768), kinds={"d_attn": SIZE.optional(), "d_ff": SIZE.optional()}
    ),
    "ffnbook.compute.kaplan_crossover_length": Case(lambda: dict(ffn_flops=1000, d_attn=8)),
    "ffnbook.compute.kaplan_forward_flops_per_token": Case(lambda: dict(n_params=100, n_layers=2, n_ctx=10, d_attn=8)),
    "ffnbook.compute.crossover_rows": Case(kinds={"models": Rows().optional()}),
    "ffnbook.compute.crossover_context_counts": Case(kinds={"rows": Rows().optional()}),
    "ffnbook.compute.crossover_table": Case(kinds={"models": Rows().optional()}),
    "ffnbook.compute.counted_flops_per_token": Case(lambda: dict(d_model=8, d_ff=16, n_heads=2, n_ctx=4)),
    "ffnbook.compute.time_ffn_vs_attention": Case(
        lambda: dict(seq_lens=(8, 16), d_model=8, d_ff=16, n_heads=2, repeats=1), deterministic=False
    ),
    "ffnbook.compute.measured_crossover": Case(lambda: dict(timing=_timing()), kinds={"timing": Obj("TimingResult")}),
    "ffnbook.compute.flop_model_seconds": Case(lambda: dict(timing=_timing()), kinds={"timing": Obj("TimingResult")}),
    "ffnbook.compute.timing_figure": Case(lambda: dict(timing=_timing()), kinds={"timing": Obj("TimingResult")}),
    "ffnbook.compute.growth_exponents": Case(lambda: dict(timing=_timing()), kinds={"timing": Obj("TimingResult")}),
    "ffnbook.decoding.cache_equals_ffn_context": Case(
        lambda: dict(model=_model("LLaMA-1 7B")), kinds={"model": Obj("ModelConfig")}
    ),
    "ffnbook.inference.kv_cache_values_per_position": Case(
        lambda: dict(model=_model()), kinds={"model": Obj("ModelConfig")}
    ),
    "ffnbook.inference.decode_table": Case(kinds={"dtype": Choice()}),
    "ffnbook.inference.training_flops_per_token": Case(
        lambda: dict(model=_model()), kinds={"model": Obj("ModelConfig")}
    ),
    "ffnbook.inference.ffn_share_of_training_flops": Case(
        lambda: dict(model=_model()), kinds={"model": Obj("ModelConfig")}
    ),
    "ffnbook.inference.decode_share_figure": Case(
        lambda: dict(contexts=[1, 16, 1024]), kinds={"dtype": Choice(), "contexts": SeqOf(SIZE).optional()}
    ),
    "ffnbook.inference.decode_flops_per_byte": Case(kinds={"dtype": Choice()}),
    "ffnbook.inference.measure_machine_balance": Case(lambda: dict(n=16, copy_mib=1, repeats=1), deterministic=False),
    # problems: the reader's typed answer
    **{
        f"ffnbook.problems.{n}": Case(
            lambda: dict(text="1.2B", answer=1.2e9, tolerance=0.005),
            kinds={"text": Text(), "answer": Number(), "tolerance": Number(low=0), "unit": None},
            why="unit: any str, '' for none (a non-str is refused: tests/test_problems.py)",
        )
        for n in ("check_answer",)
    },
    "ffnbook.problems.parse_answer": Case(
        lambda: dict(text="1.2B"),
        kinds={"text": Text(), "unit": None},
        why="unit: any str, '' for none (a non-str is refused: tests/test_problems.py)",
    ),
    "ffnbook.problems.is_within": Case(
        lambda: dict(value=1.2e9, answer=1.2e9, tolerance=0.005), kinds={"answer": Number(), "tolerance": Number(low=0)}
    ),
    "ffnbook.models.ffn_type_label": Case(lambda: dict(ffn_type="swiglu")),
    "ffnbook.models.ModelConfig": Case(
        lambda: dataclasses.asdict(_model()) | {"latent_attention": None, "ffn_width_rule": None},
        kinds={
            "name": Text(),
            "source": Text(),
            "total_params_reported": Text(),
            "architecture": Choice(),
            "attention": Choice(),
            "ffn_type": Choice(),
            **dict.fromkeys(
                ("year", "n_layers", "d_model", "n_heads", "n_kv_heads", "d_ff", "d_ff_dense", "vocab_size"), SIZE
            ),
            **dict.fromkeys(
                (
                    "n_encoder_layers",
                    "n_decoder_layers",
                    "n_moe_layers",
                    "n_experts",
                    "n_shared_experts",
                    "experts_per_token",
                    "segment_types",
                ),
                COUNT,
            ),
            "d_head": SIZE.optional(),
            "position_table": COUNT.optional(),
            "context_length": SIZE.optional(),
            "attention_window": SIZE.optional(),
            "window_layers": SIZE.optional(),
            **dict.fromkeys(
                ("ffn_bias", "vocab_size_exact", "tied_embeddings", "pooler", "attention_window_known"), FLAG
            ),
            "latent_attention": Obj("LatentAttention").optional(),
            "ffn_width_rule": Obj("WidthRule").optional(),
        },
    ),
    "ffnbook.models.check_model": Case(
        lambda: dict(model=_model()),
        kinds={"model": Obj("ModelConfig"), "name": None},
        why="name: the caller's name for the argument, used in messages",
    ),
    "ffnbook.models.resolve_model": Case(
        lambda: dict(model="GPT-2 small"),
        kinds={"model": Choice(), "name": None},
        why="name: the caller's name for the argument, used in messages",
    ),
    "ffnbook.models.parse_sheet": Case(
        lambda: dict(data=_sheet_bytes()),
        kinds={"data": Obj("sheet bytes"), "source": None},
        aliases={"data": ("models.csv",)},
        why="source: the file name used in messages",
    ),
    "ffnbook.models.get_model": Case(lambda: dict(name="GPT-2 small")),
    "ffnbook.models.reported_size": Case(lambda: dict(model=_model()), kinds={"model": Obj("ModelConfig")}),
    "ffnbook.model_parameters.ffn_share_of_blocks": Case(),
    "ffnbook.model_parameters.mla_param_count": Case(
        lambda: dict(
            d_model=7168,
            n_heads=128,
            q_lora_rank=1536,
            kv_lora_rank=512,
            qk_nope_head_dim=128,
            qk_rope_head_dim=64,
            v_head_dim=128,
        )
    ),
    "ffnbook.model_parameters.with_tied_head": Case(
        lambda: dict(model=_model("LLaMA-1 7B")), kinds={"model": Obj("ModelConfig")}
    ),
    "ffnbook.model_parameters.model_ffn_param_count": Case(
        lambda: dict(model=_model()), kinds={"model": Obj("ModelConfig"), "d_ff": SIZE.optional()}
    ),
    "ffnbook.model_parameters.parameter_breakdown": Case(
        lambda: dict(model=_model()), kinds={"model": Obj("ModelConfig")}
    ),
    "ffnbook.model_parameters.block_breakdown": Case(lambda: dict(model=_model()), kinds={"model": Obj("ModelConfig")}),
    "ffnbook.model_parameters.reference_block": Case(lambda: dict(model=_model()), kinds={"model": Obj("ModelConfig")}),
    "ffnbook.model_parameters.count_reference_block": Case(
        lambda: dict(model=_model()), kinds={"model": Obj("ModelConfig")}
    ),
    "ffnbook.model_parameters.share_rows": Case(lambda: dict(names=("GPT-2 small", "Mixtral 8x7B"))),
    "ffnbook.model_parameters.share_table": Case(lambda: dict(names=("GPT-2 small", "Mixtral 8x7B"))),
    "ffnbook.model_parameters.share_figure": Case(lambda: dict(names=("GPT-2 small", "Mixtral 8x7B"))),
    "ffnbook.inference.decode_rows": Case(
        lambda: dict(names=("GPT-2 small", "Mixtral 8x7B")), kinds={"dtype": Choice()}
    ),
    # display and plotting
    "ffnbook.display.MarkdownTable": Case(
        lambda: dict(rows=[{"n": 1234, "r": 0.5}], columns=[("n", "n", ",d"), ("ratio", "r", ".2f")]),
        kinds={"columns": Rows()},
    ),
    "ffnbook.display.format_number": Case(
        lambda: dict(value=1.05e-15, spec=".2e"),
        kinds={"value": None, "spec": Obj("format spec")},
        why="value: anything format() takes (text too); spec is checked",
    ),
    "ffnbook.display.readable": Case(
        lambda: dict(cls=__import__("typing").NamedTuple("Gap", [("gap", float)])),
        kinds={"cls": Obj("NamedTuple class")},
    ),
    "ffnbook.plotting.new_figure": Case(),
    "ffnbook.plotting.BookFigure": Case(
        lambda: dict(figure=__import__("ffnbook.plotting", fromlist=["x"]).new_figure(), description="a figure"),
        kinds={"figure": Obj("Figure"), "description": Text()},
    ),
    "ffnbook.plotting.BookFigure.to_svg": Case(
        target=lambda: (
            __import__("ffnbook.plotting", fromlist=["x"])
            .BookFigure(__import__("ffnbook.plotting", fromlist=["x"]).new_figure(), "a figure")
            .to_svg
        )
    ),
    "ffnbook.plotting.BookFigure.to_phone_svg": Case(
        target=lambda: (
            __import__("ffnbook.plotting", fromlist=["x"])
            .BookFigure(__import__("ffnbook.plotting", fromlist=["x"]).new_figure(), "a figure")
            .to_phone_svg
        )
    ),
    "ffnbook.plotting.in_the_chapters_notation": Case(
        lambda: dict(fig=__import__("ffnbook.plotting", fromlist=["x"]).new_figure()), kinds={"fig": Obj("Figure")}
    ),
    "ffnbook.plotting.styled": Case(lambda: dict(fn=lambda: 1), kinds={"fn": Func()}),
    # implementation (torch)
    "ffnbook.implementation.linear_layout": Case(lambda: dict(d_model=4, d_ff=8)),
    "ffnbook.implementation.linear_positionwise_max_diff": Case(lambda: dict(x=_x(2, 3, 4)), kinds={"x": FREE_ARRAY}),
    "ffnbook.implementation.encoder_layer_with": Case(lambda: dict(params=_ffn(), nhead=2), deterministic=False),
    "ffnbook.implementation.transformer_encoder_ffn_max_diff": Case(lambda: dict(params=_ffn(), x=_x(2, 3, 4))),
    "ffnbook.implementation.precision_comparison": Case(lambda: dict(params=_ffn(), x=_x(5, 4))),
    "ffnbook.implementation.dtype_rows": Case(lambda: dict(params=_ffn(), x=_x(3, 4))),
    "ffnbook.implementation.dtype_table": Case(lambda: dict(params=_ffn(), x=_x(3, 4))),
    "ffnbook.implementation.stored_as": Case(lambda: dict(value=1e-8), kinds={"value": Number(allow_inf=True)}),
    "ffnbook.implementation.dropout_demo": Case(lambda: dict(params=_ffn(), x=_x(8, 4))),
    "ffnbook.implementation.init_params": Case(lambda: dict(scheme="he_lecun", d_model=4, d_ff=8)),
    "ffnbook.implementation.init_output_scale": Case(lambda: dict(d_model=4, d_ff=8, n_tokens=16)),
    "ffnbook.implementation.init_scale_figure": Case(lambda: dict(scales={"ffnbook": 0.5, "he_lecun": 1.0})),
    "ffnbook.torch_ffn.torch_dtype": Case(lambda: dict(dtype=np.float64)),
    "ffnbook.torch_ffn.load_linear": Case(
        lambda: dict(layer=_linear(), W=np.zeros((3, 2)), b=np.zeros(2)),
        kinds={"layer": Obj("torch layer"), "W": ARRAY, "b": ARRAY.optional()},
    ),
    "ffnbook.torch_ffn.linear_weights": Case(lambda: dict(layer=_linear()), kinds={"layer": Obj("torch layer")}),
    "ffnbook.torch_ffn.check_tensor": Case(
        lambda: dict(x=_tensor(2, 4), d_model=4, dtype=__import__("torch").float32),
        kinds={"x": Tensor(), "dtype": Obj("torch dtype")},
    ),
    "ffnbook.torch_ffn.PositionwiseFFN": Case(lambda: dict(d_model=4, d_ff=8)),
    "ffnbook.torch_ffn.PositionwiseFFN.forward": Case(
        lambda: dict(x=_tensor(2, 4)), kinds={"x": Tensor()}, target=lambda: _torch_module("ffn").forward
    ),
    "ffnbook.torch_ffn.PositionwiseFFN.from_numpy": Case(lambda: dict(params=_ffn())),
    "ffnbook.torch_ffn.PositionwiseFFN.to_numpy": Case(target=lambda: _torch_module("ffn").to_numpy),
    "ffnbook.torch_ffn.numpy_torch_max_diff": Case(lambda: dict(x=_x(), params=_ffn())),
    "ffnbook.torch_ffn.module_max_diff": Case(
        lambda: dict(module=_torch_module("ffn64"), x=_x(), expected=np.zeros((3, 4))),
        kinds={"module": Obj("torch module")},
        aliases={"x": ("expected",)},
    ),
    # memory
    "ffnbook.memory.random_memories": Case(lambda: dict(n_memories=4, d_model=8)),
    "ffnbook.memory.build_memory_ffn": Case(lambda: dict(_memories()._asdict())),
    "ffnbook.memory.retrieve": Case(lambda: dict(params=_memory_ffn(), queries=_memories().keys[:2])),
    "ffnbook.memory.noisy_queries": Case(lambda: dict(keys=_memories().keys, noise=0.5), kinds={"keys": FREE_ARRAY}),
    "ffnbook.memory.decode": Case(lambda: dict(output=_memories().values[:2], values=_memories().values)),
    "ffnbook.memory.retrieval_accuracy": Case(lambda: dict(**_memories()._asdict(), noise=0.1)),
    "ffnbook.memory.query_example": Case(lambda: dict(memories=_memories(), slot=1, noise=0.1)),
    "ffnbook.memory.accuracy_grid": Case(lambda: dict(d_model=16, memory_ratios=[0.5], noise_levels=[0.0, 0.5])),
    "ffnbook.memory.noise_recalled_perfectly": Case(
        lambda: dict(rows=[{"accuracy": [1.0, 0.5]}], noise_levels=[0.0, 1.0])
    ),
    "ffnbook.memory.rank_one_edit": Case(
        lambda: dict(params=_memory_ffn(), key=_memories().keys[1], new_value=_memories().values[2]),
        kinds={"key": ARRAY, "new_value": ARRAY},
    ),
    "ffnbook.memory.edit_spill_figure": Case(lambda: dict(spills=[_spill()], slot=1)),
    "ffnbook.memory.activation_figure": Case(lambda: dict(memories=_memories(), slot=1, noise=0.1)),
    "ffnbook.memory.accuracy_figure": Case(
        lambda: dict(
            rows=[{"ratio": 0.5, "n_memories": 8, "accuracy": [1.0, 0.5]}], noise_levels=[0.0, 1.0], d_model=16
        )
    ),
    # facts and the tiny transformer
    "ffnbook.facts.FactWorld.filler_token": Case(
        lambda: dict(i=1), kinds={"i": IndexArray()}, target=lambda: _world().filler_token
    ),
    "ffnbook.facts.FactWorld.subject_token": Case(
        lambda: dict(s=1), kinds={"s": IndexArray()}, target=lambda: _world().subject_token
    ),
    "ffnbook.facts.FactWorld.relation_token": Case(
        lambda: dict(r=1), kinds={"r": IndexArray()}, target=lambda: _world().relation_token
    ),
    "ffnbook.facts.FactWorld.object_token": Case(
        lambda: dict(o=1), kinds={"o": IndexArray()}, target=lambda: _world().object_token
    ),
    "ffnbook.facts.FactWorld.object_tokens": Case(target=lambda: _world().object_tokens),
    "ffnbook.facts.FactWorld.token_names": Case(target=lambda: _world().token_names),
    "ffnbook.facts.FactWorld.all_facts": Case(target=lambda: _world().all_facts),
    "ffnbook.facts.FactWorld.answers": Case(lambda: dict(facts=[[0, 1], [2, 0]]), target=lambda: _world().answers),
    "ffnbook.facts.make_world": Case(lambda: dict(n_subjects=3, n_relations=2, n_objects=4)),
    "ffnbook.facts.check_world": Case(
        lambda: dict(world=_world()),
        kinds={"name": None},
        why="name: the caller's name for the argument, used in messages",
    ),
    "ffnbook.facts.check_facts": Case(
        lambda: dict(world=_world(), facts=[[0, 1]]),
        kinds={"name": None},
        why="name: the caller's name for facts, used in messages",
    ),
    "ffnbook.facts.split_facts": Case(lambda: dict(world=_world(), n_held_out=2)),
    "ffnbook.facts.make_prompts": Case(
        lambda: dict(world=_world(), facts=[[1, 0]], seq_len=5, rng=np.random.default_rng(0))
    ),
    "ffnbook.facts.repeat_facts": Case(
        lambda: dict(facts=[[0, 1], [1, 0]], n_times=2), kinds={"facts": IndexArray(bounded=False)}
    ),
    "ffnbook.facts.fact_prompts": Case(lambda: dict(world=_world(), facts=[[0, 1]], n_contexts=2, seq_len=5, seed=1)),
    "ffnbook.facts.prompt_text": Case(
        lambda: dict(world=_world(), tokens=[1, 6, 9, 0]), kinds={"answer": INDEX.optional()}
    ),
    "ffnbook.facts.prompt_table": Case(lambda: dict(world=_world(), prompts=_prompts())),
    "ffnbook.tiny_transformer.layer_norm": Case(lambda: dict(x=_tensor(2, 4)), kinds={"x": Tensor(free=True)}),
    "ffnbook.tiny_transformer.CausalSelfAttention": Case(lambda: dict(d_model=8, n_heads=2)),
    "ffnbook.tiny_transformer.CausalSelfAttention.forward": Case(
        lambda: dict(x=_tensor(2, 5, 8)), kinds={"x": Tensor()}, target=lambda: _transformer().blocks[0].attention
    ),
    "ffnbook.tiny_transformer.CausalSelfAttention.to_numpy": Case(
        target=lambda: _transformer().blocks[0].attention.to_numpy
    ),
    "ffnbook.tiny_transformer.CausalSelfAttention.load_numpy": Case(
        lambda: dict(params=_transformer().blocks[0].attention.to_numpy()),
        target=lambda: _transformer().blocks[0].attention.load_numpy,
    ),
    "ffnbook.tiny_transformer.Block": Case(lambda: dict(d_model=8, n_heads=2, d_ff=16)),
    "ffnbook.tiny_transformer.Block.forward": Case(
        lambda: dict(x=_tensor(2, 5, 8)), kinds={"x": Tensor()}, target=lambda: _transformer().blocks[0]
    ),
    "ffnbook.tiny_transformer.Block.from_numpy": Case(lambda: dict(attn_params=_attn(), ffn_params=_ffn(), n_heads=2)),
    "ffnbook.tiny_transformer.Block.to_numpy": Case(target=lambda: _transformer().blocks[0].to_numpy),
    "ffnbook.tiny_transformer.ModelConfig": Case(lambda: dict(vocab_size=20, seq_len=6)),
    "ffnbook.tiny_transformer.TinyTransformer": Case(lambda: dict(config=_transformer().config)),
    "ffnbook.tiny_transformer.TinyTransformer.forward": Case(
        lambda: dict(tokens=_tokens()), kinds={"tokens": Tensor(tokens=True)}, target=lambda: _transformer()
    ),
    "ffnbook.tiny_transformer.TinyTransformer.trace": Case(
        lambda: dict(tokens=_tokens(), ffn_ablation={0: "zero"}),
        kinds={
            "tokens": Tensor(tokens=True),
            "ffn_ablation": Mapping(empty_ok=True).optional(),
            "attention_ablation": Mapping(empty_ok=True).optional(),
        },
        target=lambda: _transformer().trace,
    ),
    "ffnbook.tiny_transformer.TrainConfig": Case(),
    "ffnbook.tiny_transformer.check_transformer": Case(
        lambda: dict(model=_transformer()),
        kinds={"model": Obj("TinyTransformer"), "name": None},
        why="name: the caller's name for the argument",
    ),
    "ffnbook.tiny_transformer.check_prompts": Case(
        lambda: dict(prompts=_prompts(), model=_transformer()),
        kinds={"model": Obj("TinyTransformer").optional(), "name": None},
        why="name: the caller's name for the argument",
    ),
    "ffnbook.tiny_transformer.deterministic_torch": Case(lambda: dict(seed=0)),
    "ffnbook.tiny_transformer.use_deterministic_torch": Case(),
    "ffnbook.tiny_transformer.numpy_block_max_diff": Case(
        lambda: dict(model=_transformer(), index=0, x=_x(5, 8)), kinds={"model": Obj("TinyTransformer")}
    ),
    "ffnbook.tiny_transformer.answer_logits": Case(
        lambda: dict(model=_transformer(), prompts=_prompts()), kinds={"model": Obj("TinyTransformer")}
    ),
    "ffnbook.tiny_transformer.guessed_objects": Case(
        lambda: dict(logits=_transformer()(_prompts().tokens)[:, -1, :], world=_world()), kinds={"logits": Tensor()}
    ),
    "ffnbook.tiny_transformer.recall": Case(
        lambda: dict(model=_transformer(), world=_world(), prompts=_prompts()), kinds={"model": Obj("TinyTransformer")}
    ),
    "ffnbook.tiny_transformer.active_share": Case(
        lambda: dict(model=_transformer(), prompts=_prompts()), kinds={"model": Obj("TinyTransformer")}
    ),
    "ffnbook.tiny_transformer.train_on_facts": Case(
        lambda: dict(
            world=_world(),
            train_facts=_world().all_facts()[:4],
            model_config=_transformer().config,
            train_config=_train_config(),
            held_out_facts=_world().all_facts()[4:],
        ),
        kinds={"initial_model": Obj("TinyTransformer").optional()},
        seconds=60,
    ),
    "ffnbook.tiny_transformer.first_step_reaching": Case(lambda: dict(history=_history(), key="recall", level=0.5)),
    # the trained FFN
    "ffnbook.trained_ffn.mean_outputs": Case(
        lambda: dict(model=_transformer(), prompts=_prompts()), kinds={"model": Obj("TinyTransformer")}
    ),
    "ffnbook.trained_ffn.ablation_study": Case(
        lambda: dict(model=_transformer(), world=_world(), prompts=_prompts()), kinds={"model": Obj("TinyTransformer")}
    ),
    "ffnbook.trained_ffn.ablated_recall": Case(
        lambda: dict(rows=_ablation_rows(), part="ffn", blocks=[0], method="zero"),
        kinds={"blocks": SeqOf(COUNT, allow_empty=True), "where": Choice()},
    ),
    "ffnbook.trained_ffn.ablation_figure": Case(
        lambda: dict(studies=_studies(), chance=0.25), kinds={"studies": SeqOf(Rows())}
    ),
    "ffnbook.trained_ffn.ablation_grid": Case(
        lambda: dict(studies=_studies(), method="mean"), kinds={"studies": SeqOf(Rows())}
    ),
    "ffnbook.trained_ffn.grid_value": Case(
        lambda: dict(
            grid=__import__("ffnbook.trained_ffn", fromlist=["x"]).ablation_grid(_studies(), "mean"),
            part="ffn",
            block=1,
            where="query",
        ),
        kinds={"grid": Mapping(), "where": Choice(), "stat": Choice()},
    ),
    "ffnbook.trained_ffn.position_classes": Case(lambda: dict(prompts=_prompts())),
    "ffnbook.trained_ffn.unit_ablation_effect": Case(
        lambda: dict(model=_transformer(), world=_world(), prompts=_prompts(), block=1),
        kinds={"model": Obj("TinyTransformer"), "where": Choice()},
    ),
    "ffnbook.trained_ffn.held_out_hits": Case(
        lambda: dict(model=_transformer(), world=_world(), held_out_facts=_world().all_facts()[:3], seed=0),
        kinds={"model": Obj("TinyTransformer"), "held_out_facts": IndexArray()},
    ),
    "ffnbook.trained_ffn.patching_study": Case(
        lambda: dict(model=_transformer(), world=_world(), prompts=_prompts(), donors=_donors(), sites=["query"]),
        kinds={"model": Obj("TinyTransformer"), "donors": Obj("Prompts"), "sites": Names()},
    ),
    "ffnbook.trained_ffn.patched": Case(
        lambda: dict(rows=_patching(), part="ffn", block=1, where="query"), kinds={"block": COUNT, "where": Choice()}
    ),
    "ffnbook.trained_ffn.patching_table": Case(
        lambda: dict(studies=[_patching()], conditions=[("ffn", 1, "query")]),
        kinds={"studies": SeqOf(Rows()), "conditions": SeqOf(Kind())},
    ),
    "ffnbook.trained_ffn.active_share_by_site": Case(
        lambda: dict(model=_transformer(), prompts=_prompts()), kinds={"model": Obj("TinyTransformer")}
    ),
    "ffnbook.trained_ffn.sparsity_table": Case(
        lambda: dict(at_init=_shares(), trained=_shares()), kinds={"at_init": Rows(), "trained": Rows()}
    ),
    "ffnbook.trained_ffn.kind_table": Case(
        lambda: dict(by_site={(1, "query"): [_readings()]}),
        kinds={"by_site": Mapping(), "at_init": Mapping().optional()},
    ),
    "ffnbook.trained_ffn.capacity_table": Case(lambda: dict(rows=_capacity_rows()), kinds={"step": COUNT.optional()}),
    "ffnbook.trained_ffn.unit_gains": Case(
        lambda: dict(rows=_capacity_rows(), d_ff=8), kinds={"step": COUNT.optional(), "n_facts": SIZE.optional()}
    ),
    "ffnbook.trained_ffn.object_score_grid": Case(
        lambda: dict(model=_transformer(), world=_world(), n_contexts=1, seed=0),
        kinds={"model": Obj("TinyTransformer"), "ffns": Choice()},
    ),
    "ffnbook.trained_ffn.ffn_against_affine": Case(
        lambda: dict(model=_transformer(), world=_world(), prompts=_prompts(), block=1),
        kinds={"model": Obj("TinyTransformer")},
    ),
    "ffnbook.trained_ffn.probe_ffn_input": Case(
        lambda: dict(model=_transformer(), world=_world(), train_prompts=_prompts(), test_prompts=_prompts(), block=1),
        kinds={
            "model": Obj("TinyTransformer"),
            "train_prompts": Obj("Prompts"),
            "test_prompts": Obj("Prompts"),
            "shuffle_seed": SEED.optional(),
        },
    ),
    "ffnbook.trained_ffn.capacity_matched_controls": Case(
        lambda: dict(
            widths=(4,),
            n_subjects=2,
            n_relations=2,
            n_objects=3,
            d_model=4,
            n_heads=2,
            n_blocks=1,
            seq_len=4,
            train_config=_train_config(),
        ),
        kinds={"widths": SeqOf(SIZE), "seeds": SeqOf(SEED)},
        seconds=60,
    ),
    "ffnbook.trained_ffn.bits_held": Case(
        lambda: dict(model=_transformer(), world=_world(), facts=_world().all_facts()),
        kinds={"model": Obj("TinyTransformer")},
    ),
    "ffnbook.tiny_transformer.parameter_count": Case(lambda: dict(config=_transformer().config)),
    "ffnbook.tiny_transformer.matched_width_without_ffn": Case(lambda: dict(config=_transformer().config)),
    "ffnbook.tiny_transformer.numerical_environment": Case(),
    "ffnbook.trained_ffn.answer_activations": Case(
        lambda: dict(model=_transformer(), prompts=_prompts(), n_contexts=2),
        kinds={"model": Obj("TinyTransformer"), "where": Choice()},
    ),
    "ffnbook.neuron_explorer.class_means": Case(
        lambda: dict(model=_transformer(), prompts=_prompts()), kinds={"model": Obj("TinyTransformer")}
    ),
    "ffnbook.neuron_explorer.silencing": Case(
        lambda: dict(model=_transformer(), world=_world(), prompts=_prompts(), block=1),
        kinds={"model": Obj("TinyTransformer"), "where": Choice()},
    ),
    "ffnbook.neuron_explorer.explorer_data": Case(
        lambda: dict(model=_transformer(), world=_world(), prompts=_prompts(), n_contexts=2),
        kinds={"model": Obj("TinyTransformer"), "sites": Names(), "n_top": Size()},
    ),
    "ffnbook.trained_ffn.value_logits": Case(
        lambda: dict(model=_transformer(), block=1), kinds={"model": Obj("TinyTransformer")}
    ),
    "ffnbook.trained_ffn.read_neurons": Case(
        lambda: dict(
            activations=np.array([[2.0, 0.0], [0.1, 1.0], [0.0, 1.0]]),
            facts=np.array([[0, 0], [0, 1], [1, 1]]),
            answers=np.array([0, 1, 0]),
            value_scores=np.array([[3.0, 0.0], [0.0, 1.0]]),
            object_tokens=np.array([0, 1]),
        ),
        kinds={"activations": ARRAY, "block": COUNT, "facts": IndexArray(bounded=False), "value_scores": FREE_ARRAY},
        aliases={
            "activations": ("value_scores", "facts", "answers"),
            "value_scores": ("object_tokens",),
            "answers": ("activations",),
            "facts": ("activations",),
        },
    ),
    "ffnbook.trained_ffn.kind_counts": Case(
        lambda: dict(readings=_readings()), kinds={"readings": Rows(allow_empty=True)}
    ),
    "ffnbook.trained_ffn.firing_summary": Case(lambda: dict(activations=np.eye(3)), kinds={"activations": FREE_ARRAY}),
    "ffnbook.trained_ffn.ffn_direct_recall": Case(
        lambda: dict(model=_transformer(), world=_world(), prompts=_prompts(), block=1),
        kinds={"model": Obj("TinyTransformer")},
    ),
    "ffnbook.trained_ffn.pick_examples": Case(
        lambda: dict(readings=_readings()), kinds={"readings": Rows(allow_empty=True)}
    ),
    "ffnbook.trained_ffn.neuron_table": Case(
        lambda: dict(world=_world(), facts=[[0, 0], [0, 1], [1, 1]], readings=_readings())
    ),
    "ffnbook.trained_ffn.neuron_figure": Case(
        lambda: dict(
            world=_world(),
            facts=[[0, 0], [0, 1], [1, 1]],
            activations=[np.array([[2.0, 0.0], [0.1, 1.0], [0.0, 1.0]])],
            readings=_readings(),
        ),
        kinds={"activations": SeqOf(Kind()), "where": Kind()},
    ),
    "ffnbook.trained_ffn.sublayer_layers": Case(
        lambda: dict(model=_transformer(), block=1), kinds={"model": Obj("TinyTransformer")}
    ),
    "ffnbook.trained_ffn.block_inputs": Case(
        lambda: dict(model=_transformer(), prompts=_prompts(), block=1), kinds={"model": Obj("TinyTransformer")}
    ),
    "ffnbook.trained_ffn.reshape_diffs": Case(
        lambda: dict(model=_transformer(), prompts=_prompts(), block=1), kinds={"model": Obj("TinyTransformer")}
    ),
    "ffnbook.trained_ffn.influence_matrices": Case(
        lambda: dict(model=_transformer(), prompts=_prompts(), block=1), kinds={"model": Obj("TinyTransformer")}
    ),
    "ffnbook.trained_ffn.strongest_inputs": Case(
        lambda: dict(matrix=np.array([[1.0, 0, 0], [0, 1, 0], [0.5, 0.1, 1.0]]), output_position=2, k=1),
        kinds={"k": SIZE},
    ),
    "ffnbook.trained_ffn.attention_share_on_fact": Case(
        lambda: dict(model=_transformer(), prompts=_prompts()), kinds={"model": Obj("TinyTransformer")}
    ),
    "ffnbook.trained_ffn.uniform_share_on_fact": Case(lambda: dict(seq_len=8)),
    "ffnbook.trained_ffn.influence_figure": Case(
        lambda: dict(
            world=_world(), prompts=_prompts(), influences={"attention": np.tril(np.ones((5, 5))), "ffn": np.eye(5)}
        ),
        kinds={"block": COUNT},
    ),
    "ffnbook.trained_ffn.training_figure": Case(
        lambda: dict(runs={"with FFNs": list(_train_results())}, chance=0.25), kinds={"runs": Mapping()}
    ),
    "ffnbook.trained_ffn.capacity_sweep": Case(
        lambda: dict(
            widths=[0, 8],
            n_subjects=[2],
            n_relations=2,
            n_objects=3,
            d_model=8,
            n_heads=2,
            n_blocks=1,
            seq_len=5,
            train_config=_train_config(),
        ),
        kinds={"n_subjects": SeqOf(SIZE), "widths": SeqOf(COUNT)},
        seconds=60,
    ),
    "ffnbook.trained_ffn.capacity_figure": Case(lambda: dict(rows=_capacity_rows(), chance=0.25, d_model=8)),
    # controls: chance, the interaction-free baseline, binomial intervals, spread over seeds
    "ffnbook.controls.chance_recall": Case(lambda: dict(world=_world())),
    "ffnbook.controls.AdditiveBaseline.scores": Case(
        lambda: dict(facts=[[0, 1], [2, 0]]), target=lambda: _baseline().scores
    ),
    "ffnbook.controls.AdditiveBaseline.guesses": Case(
        lambda: dict(facts=[[0, 1], [2, 0]]), target=lambda: _baseline().guesses
    ),
    "ffnbook.controls.fit_additive_baselines": Case(
        lambda: dict(worlds=[_world()], train_facts=[_world().all_facts()]),
        kinds={"worlds": SeqOf(Obj("FactWorld")), "train_facts": SeqOf(IndexArray()), "penalty": POSITIVE},
    ),
    "ffnbook.controls.fit_additive_baseline": Case(
        lambda: dict(world=_world(), train_facts=_world().all_facts()), kinds={"penalty": POSITIVE}
    ),
    "ffnbook.controls.baseline_recall": Case(
        lambda: dict(world=_world(), facts=_world().all_facts()), kinds={"baseline": Obj("AdditiveBaseline").optional()}
    ),
    "ffnbook.controls.binomial_summary": Case(
        lambda: dict(k=3, n=10, chance=0.25),
        kinds={
            "k": COUNT,
            "chance": Number(0, 1, low_open=True, high_open=True),
            "confidence": Number(0, 1, low_open=True, high_open=True),
        },
    ),
    "ffnbook.controls.spread": Case(
        lambda: dict(values=[0.5, 0.75]),
        kinds={"values": SeqOf(Number()), "confidence": Number(0, 1, low_open=True, high_open=True)},
    ),
    "ffnbook.controls.binomial_power": Case(
        lambda: dict(n=20, chance=0.25, true_rate=0.5),
        kinds={name: Number(0, 1, low_open=True, high_open=True) for name in ("chance", "true_rate", "alpha")},
    ),
    "ffnbook.controls.fit_linear_probe": Case(
        lambda: dict(features=_x(6, 3), labels=[0, 1, 2, 0, 1, 2], n_classes=3),
        kinds={"features": FREE_ARRAY, "labels": IndexArray(), "n_classes": SIZE, "penalty": POSITIVE},
    ),
    "ffnbook.controls.LinearProbe.predict": Case(
        lambda: dict(features=_x(2, 3)),
        kinds={"features": Array()},
        target=lambda: (
            __import__("ffnbook.controls", fromlist=["x"]).fit_linear_probe(_x(6, 3), [0, 1, 2, 0, 1, 2], 3).predict
        ),
    ),
    "ffnbook.controls.additive_part": Case(lambda: dict(scores=_x(2, 3, 4)), kinds={"scores": FREE_ARRAY}),
    "ffnbook.controls.grid_recall": Case(
        lambda: dict(
            scores=_x(*_world().objects.shape, _world().n_objects), world=_world(), facts=_world().all_facts()
        ),
        kinds={"scores": Array()},
    ),
    "ffnbook.controls.recall_table": Case(lambda: dict(entries=[("chance", 0.25)]), kinds={"entries": SeqOf(Kind())}),
    # facts for activation patching; replicas trained together
    "ffnbook.facts.swap_facts": Case(
        lambda: dict(world=_world(), prompts=_prompts(), facts=np.roll(_prompts().facts, 1, axis=0))
    ),
    "ffnbook.facts.other_answer_facts": Case(lambda: dict(world=_world(), facts=_world().all_facts(), seed=0)),
    "ffnbook.tiny_transformer.train_replicas": Case(
        lambda: dict(replicas=_replicas(), model_config=_transformer().config, train_config=_train_config()),
        kinds={"replicas": SeqOf(Obj("Replica"))},
        seconds=60,
    ),
    "ffnbook.tiny_transformer.training_flops": Case(
        lambda: dict(model_config=_transformer().config, train_config=_train_config()), kinds={"n_replicas": SIZE}
    ),
    # parallel blocks, T5 positions, latent attention, expert choice, linear memories, scaling
    "ffnbook.block.parallel_block": Case(
        lambda: dict(x=_x(), attn_params=_attn(), ffn_params=_ffn(), n_heads=2), kinds={"eps": POSITIVE}
    ),
    "ffnbook.block.ffn_branch": Case(
        lambda: dict(x=_x(), attn_params=_attn(), ffn_params=_ffn(), n_heads=2),
        kinds={"eps": POSITIVE, "layout": Choice()},
    ),
    "ffnbook.block.ffn_branch_influences": Case(
        lambda: dict(x=_x(), attn_params=_attn(), ffn_params=_ffn(), n_heads=2)
    ),
    "ffnbook.positional.t5_relative_bucket": Case(
        lambda: dict(offset=[0, -1, -20, 5]),
        kinds={"offset": Kind(), "bidirectional": FLAG, "num_buckets": SIZE, "max_distance": SIZE},
    ),
    "ffnbook.positional.t5_bias": Case(
        lambda: dict(positions=[0, 1, 2], table=_x(2, 32)),
        kinds={"table": FREE_ARRAY, "bidirectional": FLAG, "max_distance": SIZE},
    ),
    "ffnbook.positional.attention_with_positions": Case(
        lambda: dict(x=_x(), params=_attn(), n_heads=2, positions=[0, 1, 2], method="t5", relative_table=_x(2, 32)),
        kinds={"relative_table": FREE_ARRAY.optional()},
    ),
    "ffnbook.positional.predecessor_experiment": Case(
        lambda: dict(model=_tiny_model(), first_id=1, repeated_id=2, n_copies=3),
        kinds={"model": Obj("TinyModel"), "first_id": INDEX, "repeated_id": INDEX, "n_copies": SIZE},
    ),
    "ffnbook.compute.mla_score_widths": Case(
        lambda: dict(model=_model("DeepSeek-V3")), kinds={"model": Obj("ModelConfig"), "form": Choice()}
    ),
    "ffnbook.compute.model_crossover": Case(
        lambda: dict(model=_model()), kinds={"model": Obj("ModelConfig"), "mla_form": Choice()}
    ),
    "ffnbook.inference.decode_bytes_per_token": Case(
        lambda: dict(model=_model(), n_ctx=16),
        kinds={"model": Obj("ModelConfig"), "dtype": Choice(), "ffn_dtype": Choice().optional()},
    ),
    "ffnbook.inference.decode_step_weight_bytes": Case(
        lambda: dict(model=_model("Mixtral 8x7B"), batch_size=4), kinds={"model": Obj("ModelConfig"), "dtype": Choice()}
    ),
    "ffnbook.model_parameters.countable": Case(lambda: dict(model=_model()), kinds={"model": Obj("ModelConfig")}),
    "ffnbook.memory.least_squares_memory": Case(lambda: dict(_memories()._asdict())),
    "ffnbook.memory.correlation_memory": Case(lambda: dict(_memories()._asdict())),
    "ffnbook.memory.linear_recall": Case(
        lambda: dict(W=np.eye(8), **_memories()._asdict(), noise=0.1), kinds={"W": ARRAY}
    ),
    "ffnbook.memory.recall_comparison": Case(lambda: dict(d_model=16, memory_ratios=[0.5], noise_levels=[0.0, 0.2])),
    "ffnbook.memory.RecallComparison.mean": Case(
        lambda: dict(name="correlation"), target=lambda: _recall().mean, aliases={"name": ("memory",)}
    ),
    "ffnbook.memory.RecallComparison.low": Case(
        lambda: dict(name="correlation"), target=lambda: _recall().low, aliases={"name": ("memory",)}
    ),
    "ffnbook.memory.RecallComparison.high": Case(
        lambda: dict(name="correlation"), target=lambda: _recall().high, aliases={"name": ("memory",)}
    ),
    "ffnbook.memory.recall_comparison_figure": Case(
        lambda: dict(by_pairs=_recall(), by_noise=_recall()),
        kinds={"by_pairs": Obj("RecallComparison"), "by_noise": Obj("RecallComparison")},
    ),
    "ffnbook.memory.covariance_edit": Case(
        lambda: dict(
            params=_memory_ffn(), key=_memories().keys[1], new_value=_memories().values[2], inputs=_memories().keys
        ),
        kinds={"key": ARRAY, "new_value": ARRAY, "inputs": ARRAY},
    ),
    "ffnbook.memory.edit_spill": Case(
        lambda: dict(memories=_memories(), slot=1, new_value=_memories().values[2]),
        kinds={"statistics": ARRAY.optional(), "method": Choice()},
    ),
    "ffnbook.memory.largest_spills": Case(
        lambda: dict(memories=_memories(), new_value=_memories().values[0]),
        kinds={"new_value": ARRAY, "method": Choice()},
    ),
    "ffnbook.memory.statistics_spill": Case(
        lambda: dict(
            memories=_memories(), slot=0, new_value=_memories().values[1], sizes=[2, 4, 6], threshold=0.05, n_unseen=8
        ),
        kinds={"sizes": SeqOf(SIZE), "n_unseen": SIZE},
    ),
    "ffnbook.memory.statistics_spill_figure": Case(
        lambda: dict(rows=_statistics_rows(), d_ff=4, minimum_norm_change=0.5), kinds={"minimum_norm_change": POSITIVE}
    ),
    "ffnbook.moe.ExpertChoice.experts_of": Case(
        lambda: dict(token=1), kinds={"token": INDEX}, target=lambda: _expert_choice().experts_of
    ),
    "ffnbook.moe.ExpertChoice.experts_per_token": Case(target=lambda: _expert_choice().experts_per_token),
    "ffnbook.moe.expert_choice_route": Case(
        lambda: dict(logits=_x(6, 3), capacity=2),
        kinds={"logits": FREE_ARRAY, "capacity": SIZE},
        aliases={"logits": ("capacity",)},
    ),
    "ffnbook.moe.expert_choice_layer": Case(
        lambda: dict(x=_x(6, 4), params=_moe(), capacity=2), kinds={"capacity": SIZE}
    ),
    "ffnbook.moe.expert_choice_batch_dependence": Case(
        lambda: dict(params=_moe(), x=_x(6, 4), capacity=2), kinds={"capacity": SIZE, "position": INDEX.optional()}
    ),
    "ffnbook.moe.routing_combinations": Case(lambda: dict(n_experts=16, top_k=2)),
    "ffnbook.moe.fine_grained_split": Case(
        lambda: dict(d_model=512, d_ff=2048, n_experts=16, top_k=2, m=4), kinds={"m": SIZE}
    ),
    "ffnbook.moe.router_z_loss": Case(lambda: dict(logits=_x(6, 3)), kinds={"logits": FREE_ARRAY}),
    "ffnbook.moe.expected_distinct_experts": Case(lambda: dict(n_experts=8, top_k=2, batch_size=5)),
    "ffnbook.moe.simulate_distinct_experts": Case(
        lambda: dict(n_experts=8, top_k=2, batch_size=5, trials=50), kinds={"trials": SIZE}
    ),
    "ffnbook.scaling.training_flops": Case(
        lambda: dict(n_params=70e9, n_tokens=1.4e12), kinds={"n_params": POSITIVE, "n_tokens": POSITIVE}
    ),
    "ffnbook.scaling.tokens_per_parameter": Case(
        lambda: dict(n_params=70e9, n_tokens=1.4e12), kinds={"n_params": POSITIVE, "n_tokens": POSITIVE}
    ),
    "ffnbook.scaling.growth_under": Case(
        lambda: dict(compute_factor=10.0, fit="Kaplan et al."), kinds={"compute_factor": POSITIVE, "fit": Choice()}
    ),
    "ffnbook.scaling.tokens_per_parameter_range": Case(kinds={"rows": Rows().optional()}),
}


def _recall():
    from ffnbook.memory import recall_comparison

    return recall_comparison(16, [0.5], [0.0, 0.2])


def _statistics_rows():
    from ffnbook.memory import statistics_spill

    m = _memories()
    return statistics_spill(m, 0, m.values[1], [2, 4, 6], threshold=0.05, n_unseen=8)


def _expert_choice():
    from ffnbook.moe import expert_choice_route

    return expert_choice_route(_x(6, 3), 2)


def _sheet_bytes():
    from importlib import resources

    return resources.files("ffnbook").joinpath("data/models.csv").read_bytes()


def _memory_ffn():
    from ffnbook.memory import build_memory_ffn

    return build_memory_ffn(*_memories())


def _linear():
    from torch import nn

    return nn.Linear(3, 2).double()


def _torch_module(which):
    import torch

    torch.manual_seed(0)
    if which == "gated":
        from ffnbook.gated_torch import GatedFFN

        return GatedFFN(4, 6)
    from ffnbook.torch_ffn import PositionwiseFFN

    module = PositionwiseFFN(4, 8)
    return module.double() if which == "ffn64" else module


# --- resolving a callable --------------------------------------------------------------------------


class SpecError(Exception):
    """The spec cannot say how to call something: a declaration is missing."""


@dataclasses.dataclass
class Resolved:
    qualname: str
    target: Callable[[], Callable]
    args: Callable[[], dict]
    params: list  #: (name, Kind, names an error may use)
    seconds: float
    left_out: dict  #: parameter -> why it is not generated
    deterministic: bool = True


def resolve(qualname: str, obj) -> Resolved | None:
    """How to call ``obj`` and what to feed each parameter; None for a record."""
    import inspect

    from contract import annotation_kind, is_record, parameters

    case = CASES.get(qualname)
    if case is None and is_record(obj):
        return None
    case = case or Case()
    target = case.target or (lambda: obj)
    made = target()
    is_method = "." in qualname.removeprefix("ffnbook.").split(".", 1)[-1]
    sig_source = made if (case.target is not None or not is_method) else obj
    signature = parameters(sig_source.forward if _is_module(sig_source) and case.target else sig_source)
    if dataclasses.is_dataclass(obj) and isinstance(obj, type):
        signature = parameters(obj)
    given = case.args() if case.args else {}
    params, left_out = [], {}
    for p in signature:
        if p.name in case.kinds:
            kind = case.kinds[p.name]
        elif p.name in NAME_KINDS:
            kind = NAME_KINDS[p.name]
            if p.default is None and not getattr(kind, "inner", None):
                kind = kind.optional()
        else:
            kind = annotation_kind(p.annotation)
            if kind is not None and p.default is None:
                kind = kind.optional()
        if kind is None:
            if p.name in case.kinds or case.why and p.name in case.why:
                left_out[p.name] = case.why
                continue
            raise SpecError(
                f"{qualname}: declare the kind of parameter {p.name!r} in tests/contract_spec.py "
                "(NAME_KINDS for a name used across ffnbook, or the callable's Case.kinds)"
            )
        if p.default is inspect.Parameter.empty and p.name not in given:
            example = getattr(kind, "example", None)
            if example is None:
                raise SpecError(f"{qualname}: give a valid value of {p.name!r} in its Case.args")
            given[p.name] = example
        params.append((p.name, kind, (p.name, *ALIASES.get(p.name, ()), *case.aliases.get(p.name, ()))))
    names = {p.name for p in signature}
    defaults = {p.name: p.default for p in signature if p.default is not inspect.Parameter.empty}
    fixed_args = case.args

    def args():
        """Every parameter's valid value: fresh from Case.args, else the example or the default."""
        values = fixed_args() if fixed_args else {}
        for name in given:
            values.setdefault(name, given[name])
        for name, default in defaults.items():
            values.setdefault(name, default)
        return {k: v for k, v in values.items() if k in names}

    return Resolved(qualname, target, args, params, case.seconds, left_out, case.deterministic)


def _is_module(obj) -> bool:
    try:
        import torch
    except ImportError:  # pragma: no cover
        return False
    return isinstance(obj, torch.nn.Module)
