"""The numbers behind the book's explorables: what each one shows, for any setting of its controls.

An explorable is an interactive figure that runs in the reader's browser
without a kernel. Its script (``docs/_static/explorables/explorables.js``) is
a small port of the closed-form formulas of this package; the functions here
are the reference it must agree with. Each ``*_state`` function takes the
settings of one explorable's controls and returns what the explorable
displays, computed with ffnbook's own formulas:

* :func:`width_state` -- ``width.md``: d_ff from the model width and a width
  ratio, classic or gated (LLaMA's rounding rule), and the block's parameters;
* :func:`parameter_state` -- ``parameter-count.md``: a sheet model with other
  layers, width, vocabulary, head tying or key/value heads, broken down by
  :func:`~ffnbook.model_parameters.parameter_breakdown`;
* :func:`compute_state` -- ``compute.md``: FLOPs per token of the FFN and of
  attention at a sequence length, and the crossover, from :mod:`ffnbook.compute`;
* :func:`moe_state` -- ``mixture-of-experts.md``: stored and active parameters
  and the FFN's FLOPs per token with other expert settings.

:func:`explorable_data` returns what a page ships to the script: the model
sheet's inputs, a few build-time coefficients and the initial settings, as
plain JSON-ready values. A browser test evaluates the script on hundreds of
settings and compares it with these functions (integers exactly, ratios to
1e-12), so the port cannot drift from the formulas.
"""

from __future__ import annotations

import dataclasses

from ._checks import (
    require_bool,
    require_choice,
    require_nonnegative_int,
    require_positive_int,
    require_positive_number,
)
from .compute import (
    attention_projection_flops_per_token,
    attention_score_flops_per_token,
    ffn_flops_per_token,
    model_crossover,
)
from .model_parameters import countable, parameter_breakdown, with_tied_head
from .models import ModelConfig, load_models, resolve_model
from .parameters import attention_param_count, ffn_param_count, gated_ffn_param_count
from .plotting import PALETTE
from .width import llama_ffn_width

#: Kinds of explorable, in the order the chapter meets them.
KINDS = ("width", "parameters", "compute", "moe")

#: The sheet model each explorable opens on, one that the static figure or
#: table beside it shows, so the first view repeats its numbers.
START_MODELS = {"parameters": "GPT-2 small", "compute": "GPT-2 small", "moe": "Mixtral 8x7B"}

#: The settings each explorable starts from.
INITIAL = {
    "width": {"d_model": 512, "ratio": 4.0, "gated": False, "multiple_of": 256, "bias": True},
    "parameters": {"model": START_MODELS["parameters"]},
    "compute": {"model": START_MODELS["compute"], "n_ctx": 1024},
    "moe": {"model": START_MODELS["moe"]},
}


# --- width.md ---------------------------------------------------------------------------


def width_d_ff(d_model: int, ratio: float, gated: bool, multiple_of: int = 1) -> int:
    """The FFN width the width explorable sets for ``d_model`` and the ratio ``ratio``.

    Classic: ``d_ff = round(ratio · d_model)``, as in
    :func:`ffnbook.parameters.width_ratio_rows`. Gated: LLaMA's rule,
    :func:`ffnbook.width.llama_ffn_width`, with ``ratio / 4`` as its multiplier:
    two-thirds of ``4·d_model``, scaled by ``ratio / 4``, rounded up to a
    multiple of ``multiple_of``. So ``ratio`` is the width of the classic FFN
    the gated one replaces, in units of ``d_model``.

    >>> width_d_ff(4096, 4.0, gated=True, multiple_of=256)  # LLaMA-1 7B
    11008
    >>> width_d_ff(4096, 5.2, gated=True, multiple_of=1024)  # Llama-3 8B's multiplier 1.3
    14336
    >>> width_d_ff(512, 4.0, gated=False)
    2048
    """
    d_model = require_positive_int(d_model, "d_model")
    ratio = require_positive_number(ratio, "ratio")
    multiple_of = require_positive_int(multiple_of, "multiple_of")
    if require_bool(gated, "gated"):
        return llama_ffn_width(d_model, multiple_of, ratio / 4)
    return require_positive_int(int(round(ratio * d_model)), "round(ratio · d_model)")


def width_state(d_model: int, ratio: float, gated: bool, multiple_of: int = 1, bias: bool = True) -> dict:
    """What the width explorable shows: d_ff, FFN and attention parameters, the FFN's share.

    ``bias`` gives both sublayers biases (the convention of
    :mod:`ffnbook.model_parameters`). Attention is full multi-head attention,
    whose count does not depend on the number of heads.

    >>> s = width_state(512, 4.0, gated=False)
    >>> s["d_ff"], s["ffn_params"], s["attention_params"]
    (2048, 2099712, 1050624)
    >>> round(s["ffn_share"], 4)
    0.6665
    """
    d_ff = width_d_ff(d_model, ratio, gated, multiple_of)
    ffn = (gated_ffn_param_count if gated else ffn_param_count)(d_model, d_ff, bias=bias)
    attention = attention_param_count(d_model, bias=bias)
    return {
        "d_ff": d_ff,
        "d_ff_over_d_model": d_ff / d_model,
        "ffn_params": ffn,
        "attention_params": attention,
        "ffn_share": ffn / (ffn + attention),
        "ffn_in_d2": ffn / d_model**2,
    }


# --- parameter-count.md and mixture-of-experts.md ----------------------------------------------


def _scaled(width: int, old_d_model: int, new_d_model: int) -> int:
    """``width · new / old`` rounded to the nearest integer (halves up), in integers."""
    return (2 * width * new_d_model + old_d_model) // (2 * old_d_model)


def model_variant(
    model: ModelConfig | str,
    *,
    n_layers: int | None = None,
    d_model: int | None = None,
    vocab_size: int | None = None,
    n_kv_heads: int | None = None,
    n_experts: int | None = None,
    experts_per_token: int | None = None,
    d_ff: int | None = None,
    n_shared_experts: int | None = None,
) -> ModelConfig:
    """A sheet model with some settings changed, as the explorables change them.

    * ``n_layers`` counts all blocks: an encoder–decoder model splits them
      evenly between its two stacks (so the count must be even), and a model
      with dense and MoE blocks keeps its dense ones and changes the number of
      MoE blocks.
    * ``d_model`` keeps the number of heads (so it must be a multiple of it)
      and each FFN's ratio ``d_ff / d_model`` (the new widths are rounded to
      whole units). DeepSeek-V3's latent-attention sizes stay as released.
    * ``d_ff`` sets the width of each expert of an MoE model (of the FFN of a
      dense one); ``n_experts``, ``experts_per_token`` and ``n_shared_experts``
      change its mixtures.

    >>> model_variant("Llama-3 8B", n_kv_heads=32).attention
    'mha'
    >>> v = model_variant("T5-base v1.0", n_layers=8)
    >>> v.n_encoder_layers, v.n_decoder_layers
    (4, 4)
    """
    base = resolve_model(model)
    changes: dict = {}
    if n_layers is not None:
        n_layers = require_positive_int(n_layers, "n_layers")
        if base.architecture == "encoder-decoder":
            if n_layers % 2:
                raise ValueError(f"{base.name} has two equal stacks, so n_layers must be even, got {n_layers}")
            changes.update(n_encoder_layers=n_layers // 2, n_decoder_layers=n_layers // 2)
        elif base.architecture == "encoder":
            changes.update(n_encoder_layers=n_layers)
        else:
            changes.update(n_decoder_layers=n_layers)
        if base.window_layers is not None:  # the same share of layers keeps to the window
            changes.update(window_layers=max(1, min(n_layers, round(base.window_layers * n_layers / base.n_layers))))
        if base.is_moe:
            if n_layers <= base.n_dense_layers:
                raise ValueError(f"{base.name} keeps its {base.n_dense_layers} dense blocks, "
                                 f"so n_layers must exceed that, got {n_layers}")
            changes.update(n_moe_layers=n_layers - base.n_dense_layers)
        changes.update(n_layers=n_layers)
    if d_model is not None:
        d_model = require_positive_int(d_model, "d_model")
        if d_model % base.n_heads:
            raise ValueError(f"d_model must be a multiple of {base.name}'s {base.n_heads} heads, got {d_model}")
        changes.update(d_model=d_model, d_ff=_scaled(base.d_ff, base.d_model, d_model),
                       d_ff_dense=_scaled(base.d_ff_dense, base.d_model, d_model))
        if base.heads_split_d_model:
            changes.update(d_head=d_model // base.n_heads)  # the heads still split d_model
    if vocab_size is not None:
        changes.update(vocab_size=require_positive_int(vocab_size, "vocab_size"))
    if n_kv_heads is not None:
        n_kv_heads = require_positive_int(n_kv_heads, "n_kv_heads")
        if base.attention == "mla":
            raise ValueError(f"{base.name} uses latent attention, which has no key/value head count to change")
        if base.n_heads % n_kv_heads:
            raise ValueError(f"n_kv_heads must divide {base.name}'s {base.n_heads} heads, got {n_kv_heads}")
        kind = "mha" if n_kv_heads == base.n_heads else ("mqa" if n_kv_heads == 1 else "gqa")
        changes.update(n_kv_heads=n_kv_heads, attention=kind)
    if d_ff is not None:
        d_ff = require_positive_int(d_ff, "d_ff")
        changes.update(d_ff=d_ff, **({} if base.is_moe else {"d_ff_dense": d_ff}))
    moe = {"n_experts": n_experts, "experts_per_token": experts_per_token, "n_shared_experts": n_shared_experts}
    if any(v is not None for v in moe.values()):
        if not base.is_moe:
            raise ValueError(f"{base.name} is a dense model; expert settings apply to MoE models only")
        if n_shared_experts is not None:
            n_shared_experts = require_nonnegative_int(n_shared_experts, "n_shared_experts")
        n_experts = base.n_experts if n_experts is None else require_positive_int(n_experts, "n_experts")
        top_k = (base.experts_per_token if experts_per_token is None
                 else require_positive_int(experts_per_token, "experts_per_token"))
        if top_k > n_experts:
            raise ValueError(f"experts_per_token must be at most n_experts={n_experts}, got {top_k}")
        changes.update(n_experts=n_experts, experts_per_token=top_k,
                       n_shared_experts=base.n_shared_experts if n_shared_experts is None else n_shared_experts)
    return dataclasses.replace(base, **changes)


def _breakdown_dict(model: ModelConfig, tied_head: bool | None) -> dict:
    """:func:`parameter_breakdown` as a dict, with the output head tied or untied as asked."""
    b = parameter_breakdown(model if tied_head is None else with_tied_head(model, tied_head))._asdict()
    del b["name"]
    return b


def parameter_state(model: str, *, tied_head: bool | None = None, **changes) -> dict:
    """What the parameter explorable shows for a sheet model with ``changes`` (see :func:`model_variant`).

    Returns the integer counts of :func:`~ffnbook.model_parameters.parameter_breakdown`
    (with the output head tied or untied as ``tied_head`` says; ``None``
    keeps the model's own layout) and each kind's share of the stored and of
    the active parameters.

    >>> s = parameter_state("GPT-2 small")
    >>> s["total"], round(s["ffn_share"], 3)
    (124439808, 0.455)
    >>> parameter_state("GPT-2 small", tied_head=False)["total"] - s["total"]  # 50257 · 768
    38597376
    """
    if tied_head is not None:
        tied_head = require_bool(tied_head, "tied_head")
    b = _breakdown_dict(model_variant(model, **changes), tied_head)
    rest = b["router"] + b["norms"] + b["other"]
    for suffix, ffn, total in (("", b["ffn"], b["total"]), ("_active", b["ffn_active"], b["total_active"])):
        b[f"embeddings_share{suffix}"] = b["embeddings"] / total
        b[f"attention_share{suffix}"] = b["attention"] / total
        b[f"ffn_share{suffix}"] = ffn / total
        b[f"rest_share{suffix}"] = rest / total
    b["ffn_share_non_embedding"] = b["ffn"] / (b["total"] - b["embeddings"])
    return b


def moe_state(model: str, **changes) -> dict:
    """What the mixture-of-experts explorable shows: stored and active parameters, FFN FLOPs per token.

    ``changes`` are ``n_experts``, ``experts_per_token``, ``d_ff`` (each
    expert's width) and ``n_shared_experts`` (see :func:`model_variant`).
    FLOPs per token are :func:`~ffnbook.compute.ffn_flops_per_token` of one
    MoE layer, for the experts a token runs (routed plus shared) and, for
    comparison, for all of them; ``ffn_flops_all_layers`` adds every block's
    FFN, dense blocks included.

    >>> s = moe_state("Mixtral 8x7B")
    >>> s["ffn_flops_layer"]  # two SwiGLU experts: 2 · 3 · 4096 · 14336 · 2
    704643072
    """
    variant = model_variant(model, **changes)
    b = parameter_breakdown(variant)
    n_active = variant.experts_per_token + variant.n_shared_experts
    per_layer = ffn_flops_per_token(variant.d_model, variant.d_ff, gated=variant.gated, n_active=n_active)
    every_expert = ffn_flops_per_token(variant.d_model, variant.d_ff, gated=variant.gated,
                                       n_active=variant.n_experts + variant.n_shared_experts)
    dense = (ffn_flops_per_token(variant.d_model, variant.d_ff_dense, gated=variant.gated)
             if variant.n_dense_layers else 0)
    return {
        "stored": b.total,
        "active": b.total_active,
        "active_fraction": b.total_active / b.total,
        "ffn": b.ffn,
        "ffn_active": b.ffn_active,
        "router": b.router,
        "ffn_share": b.ffn / b.total,
        "ffn_share_active": b.ffn_active / b.total_active,
        "ffn_flops_layer": per_layer,
        "ffn_flops_layer_every_expert": every_expert,
        "ffn_flops_all_layers": variant.n_moe_layers * per_layer + variant.n_dense_layers * dense,
    }


# --- compute.md ----------------------------------------------------------------------------


def compute_state(model: str, n_ctx: int) -> dict:
    """What the compute explorable shows for a sheet model at sequence length ``n_ctx``.

    FLOPs per token and per layer, by :mod:`ffnbook.compute`'s conventions:
    the FFN (its active experts in an MoE layer), attention's projections and
    its scores against the positions a token attends to (at most the model's
    sliding window, the sheet's ``attention_window``, where every layer keeps
    to it; of a model whose other layers attend to everything, those full
    layers are shown), and from
    :func:`~ffnbook.compute.model_crossover` the crossover length, which a
    window shorter than it keeps out of reach, the pre-training context and
    whether the crossover lies beyond it, and the table's note. Values the
    book does not compute are ``None``: every attention cost of a model whose
    head size is unconfirmed, and the projections of latent attention.

    >>> s = compute_state("GPT-2 small", 1024)
    >>> s["ffn"], s["scores"], s["crossover"]
    (9437184, 3145728, 3072.0)
    """
    m = resolve_model(model)
    n_ctx = require_positive_int(n_ctx, "n_ctx")
    row = model_crossover(m)
    window = row["attention_window"]  # kept by every layer; else the full-attention layers are shown
    attended = n_ctx if window is None else min(n_ctx, window)
    state = {"ffn": row["ffn_flops"], "projections": None, "scores": None, "attention": None,
             "attended": attended, "window": window, "crossover": row["crossover"],
             "crossover_reached": None, "scores_over_ffn": None, "context_length": row["context_length"],
             "beyond_context": row["beyond_context"], "note": row["note"]}
    if m.d_head is None:  # not confirmed by the sources: no attention cost is computed
        return state
    d_head, d_head_v = m.d_head, m.d_head_v
    scores = attention_score_flops_per_token(attended, m.n_heads, d_head=d_head, d_head_v=d_head_v)
    state.update(scores=scores, scores_over_ffn=scores / row["ffn_flops"],
                 crossover_reached=window is None or row["crossover"] <= window)
    if m.attention != "mla":
        projections = attention_projection_flops_per_token(m.d_model, m.n_heads, n_kv_heads=m.n_kv_heads,
                                                           d_head=d_head)
        state.update(projections=projections, attention=projections + scores)
    return state


# --- what a page ships -----------------------------------------------------------------------


def _model_inputs(m: ModelConfig) -> dict:
    """A sheet model's fields that the parameter breakdown reads, in short JSON keys."""
    return {
        "arch": m.architecture, "L": m.n_layers, "moeL": m.n_moe_layers, "d": m.d_model,
        "h": m.n_heads, "kv": m.n_kv_heads, "dh": m.d_head, "mla": m.attention == "mla", "ff": m.d_ff,
        "ffd": m.d_ff_dense, "gated": m.gated, "bias": m.ffn_bias, "E": m.n_experts,
        "S": m.n_shared_experts, "k": m.experts_per_token, "V": m.vocab_size,
        # A position table of unconfirmed size is not counted (ffnbook.model_parameters' rule).
        "tied": m.tied_embeddings, "pos": (m.position_table or 0) + m.segment_types, "pool": m.pooler,
    }


def explorable_data(kind: str) -> dict:
    """Everything the explorable ``kind`` (one of :data:`KINDS`) needs in the browser, JSON-ready.

    Always ``palette`` (:data:`ffnbook.plotting.PALETTE`) and ``initial``
    (:data:`INITIAL`); then ``models``: for ``width`` each dense sheet model's
    name, ``d_model``, ``d_ff`` and whether it is gated (the marks on the
    figure); for ``parameters`` and ``moe`` the fields of ``_model_inputs``
    for every model the breakdown covers (MoE models only for ``moe``), and
    DeepSeek-V3's latent-attention sizes; for ``compute`` each model's FFN and
    projection FLOPs per token, its score FLOPs per attended position, its
    crossover, window (and whether the sheet gives it), pre-training context and
    note, computed here with :mod:`ffnbook.compute`; with ``models`` by name,
    ``names``: the names in the sheet's order, the order of the model menu.
    """
    require_choice(kind, "kind", KINDS)
    data: dict = {"palette": list(PALETTE), "initial": dict(INITIAL[kind])}
    models = [m for m in load_models() if countable(m)]
    if kind == "width":
        data["models"] = [[m.name, m.d_model, m.d_ff_dense, m.gated] for m in load_models() if not m.is_moe]
    elif kind in ("parameters", "moe"):
        data["models"] = {m.name: _model_inputs(m) for m in models if kind == "parameters" or m.is_moe}
        latent = next(m for m in models if m.latent_attention is not None)
        data["mla"] = dict(latent.latent_attention._asdict(), n_heads=latent.n_heads)
    else:
        rows = {}
        for m in load_models():
            one = compute_state(m.name, 1)  # one attended position: the score cost per position
            rows[m.name] = {"ffn": one["ffn"], "proj": one["projections"], "score": one["scores"],
                            "cross": one["crossover"], "window": one["window"], "ctx": one["context_length"],
                            "beyond": one["beyond_context"], "note": one["note"],
                            # GPT-3's banded layers have a window its paper does not give.
                            "window_known": m.attention_window_known}
        data["models"] = rows
    if isinstance(data["models"], dict):
        # The menus list the models in the sheet's order (the page's JSON sorts its keys).
        data["names"] = list(data["models"])
    return data
