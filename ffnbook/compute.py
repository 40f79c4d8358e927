"""What the FFN and attention cost in floating-point operations, and in seconds.

Conventions: forward pass only, one multiply-add counts as two FLOPs, and
costs are *per token*. A matrix product of an ``(m, k)`` by a ``(k, n)``
matrix therefore costs ``2·m·k·n`` FLOPs. Biases, activations and
normalisation cost a few operations per element of a vector of width
``d_model`` or ``d_ff``; the softmax costs a few per attention score, that is
per position and per head (``n_ctx·n_heads`` scores per token, see
:func:`softmax_scores_per_token`), which grows with the sequence like the
score products but is ``4·d_head`` times smaller than them. All of these are
left out, as in the usual "2N FLOPs per token" rule of Kaplan et al. (2020).

* The FFN multiplies each token's vector by each of its weight matrices once,
  so it costs twice its weight count per token, whatever the sequence length.
* Attention costs ``2·`` (its projection weights) per token, plus the score
  computation ``Q Kᵀ`` and the weighted sum ``A V``, which grow with the
  number of positions ``n_ctx`` each token attends to.

The closed forms here are checked against torch's own FLOP counter by
:func:`counted_flops_per_token` (and in the tests). The timing experiment,
:func:`time_ffn_vs_attention`, measures seconds, which vary by machine and
load. Both import torch when called; importing this module does not.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Sequence
from typing import NamedTuple

from ._checks import (
    describe,
    require_bool,
    require_choice,
    require_positive_int,
    require_positive_number,
    require_same_length,
    require_seed,
    require_sequence,
    require_tensor_size,
)
from .models import check_model, load_models
from .parameters import ffn_param_count, gated_ffn_param_count
from .plotting import ATTENTION_COLOUR, FFN_COLOUR, PALETTE, BookFigure, new_figure, styled


def _positive_number(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a positive number, got {type(value).__name__} {value!r}")
    if not value > 0 or math.isinf(value):
        raise ValueError(f"{name} must be a positive finite number, got {value}")
    return float(value)


def ffn_flops_per_token(d_model: int, d_ff: int, *, gated: bool = False, n_active: int = 1) -> int:
    """Forward FLOPs per token of an FFN: twice its weight count.

    A classic FFN has two ``d_model × d_ff`` matrices, a gated (GLU) FFN three;
    a mixture-of-experts layer runs ``n_active`` experts of width ``d_ff`` for
    each token (routed plus shared ones). The router's ``2·d_model·n_experts``
    FLOPs are negligible and not included.

    >>> ffn_flops_per_token(768, 3072)  # 2 · (2·768·3072)
    9437184
    >>> ffn_flops_per_token(4096, 14336, gated=True, n_active=2)  # Mixtral: two SwiGLU experts
    704643072
    """
    n_active = require_positive_int(n_active, "n_active")
    weights = (gated_ffn_param_count if require_bool(gated, "gated") else ffn_param_count)(d_model, d_ff, bias=False)
    return 2 * weights * n_active


def _head_dims(d_model, n_heads, d_head, d_head_v):
    n_heads = require_positive_int(n_heads, "n_heads")
    if d_head is None:
        d_model = require_positive_int(d_model, "d_model")
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads} "
                             "unless d_head is given")
        d_head = d_model // n_heads
    d_head = require_positive_int(d_head, "d_head")
    d_head_v = d_head if d_head_v is None else require_positive_int(d_head_v, "d_head_v")
    return n_heads, d_head, d_head_v


def attention_projection_flops_per_token(
    d_model: int, n_heads: int, n_kv_heads: int | None = None, d_head: int | None = None
) -> int:
    """Forward FLOPs per token of the Q, K, V and output projections.

    ``2·d_model·(n_heads·d_head)`` each for Q and O; with grouped-query
    attention K and V have only ``n_kv_heads·d_head`` columns. Independent of
    the sequence length.

    >>> attention_projection_flops_per_token(768, 12)  # 2 · 4·768²
    4718592
    >>> attention_projection_flops_per_token(4096, 32, n_kv_heads=8)  # GQA: K, V a quarter
    83886080
    """
    n_heads, d_head, _ = _head_dims(d_model, n_heads, d_head, None)
    d_model = require_positive_int(d_model, "d_model")
    n_kv_heads = n_heads if n_kv_heads is None else require_positive_int(n_kv_heads, "n_kv_heads")
    if n_heads % n_kv_heads:
        raise ValueError(f"n_heads={n_heads} must be divisible by n_kv_heads={n_kv_heads}")
    d_q, d_kv = n_heads * d_head, n_kv_heads * d_head
    return 2 * (d_model * d_q + 2 * d_model * d_kv + d_q * d_model)


def attention_score_flops_per_token(
    n_ctx: int,
    n_heads: int,
    *,
    d_model: int | None = None,
    d_head: int | None = None,
    d_head_v: int | None = None,
) -> int:
    """Forward FLOPs per token of ``Q Kᵀ`` and ``A V`` against ``n_ctx`` positions.

    Each of the ``n_heads`` query heads takes ``n_ctx`` dot products of width
    ``d_head`` (``2·n_ctx·d_head`` FLOPs) and sums ``n_ctx`` value vectors of
    width ``d_head_v`` (``2·n_ctx·d_head_v``). With ``d_head_v = d_head`` and
    ``d_attn = n_heads·d_head`` this is ``4·n_ctx·d_attn``. The number of key/value
    heads does not enter: grouped-query attention shares keys, it does not
    skip dot products. No causal discount is applied: every query is counted
    against all ``n_ctx`` keys.

    Give either ``d_model`` (heads of width ``d_model / n_heads``) or ``d_head``.

    >>> attention_score_flops_per_token(1024, 12, d_model=768)  # 4 · 1024 · 768
    3145728
    """
    n_ctx = require_positive_int(n_ctx, "n_ctx")
    if d_model is None and d_head is None:
        raise TypeError("give d_model or d_head to fix the width of each head")
    n_heads, d_head, d_head_v = _head_dims(d_model, n_heads, d_head, d_head_v)
    return 2 * n_ctx * n_heads * (d_head + d_head_v)


def crossover_length(ffn_flops: int, n_heads: int, d_head: int, d_head_v: int | None = None) -> float:
    """Context length at which attention's score FLOPs per token equal the FFN's.

    Solves ``2·n·n_heads·(d_head + d_head_v) = ffn_flops`` for ``n``. For
    ``d_head_v = d_head`` that is ``ffn_flops / (4·d_attn)``; for a classic FFN
    with ``d_attn = d_model`` it is exactly ``d_ff``.

    >>> crossover_length(ffn_flops_per_token(768, 3072), 12, 64)
    3072.0
    """
    ffn_flops = _positive_number(ffn_flops, "ffn_flops")
    d_head = require_positive_int(d_head, "d_head")
    n_heads, d_head, d_head_v = _head_dims(None, n_heads, d_head, d_head_v)
    return ffn_flops / (2 * n_heads * (d_head + d_head_v))


def softmax_scores_per_token(n_ctx: int, n_heads: int) -> int:
    """How many attention scores one token's softmax normalises: one per position and head.

    The softmax's cost (an exponential, a sum and a division per score) grows
    with ``n_ctx · n_heads``, not with the model width. Per score it is a few
    operations, against the ``2·(d_head + d_head_v)`` FLOPs of the products
    ``Q Kᵀ`` and ``A V`` that produce and use it (:func:`softmax_share_of_score_flops`).

    >>> softmax_scores_per_token(1024, 12)
    12288
    """
    n_ctx = require_positive_int(n_ctx, "n_ctx")
    n_heads = require_positive_int(n_heads, "n_heads")
    return n_ctx * n_heads


def softmax_share_of_score_flops(d_head: int, d_head_v: int | None = None) -> float:
    """Softmax scores per FLOP of ``Q Kᵀ`` and ``A V``: ``1 / (2·(d_head + d_head_v))``.

    Independent of ``n_ctx``: the softmax grows with the sequence exactly as the
    score products do, at this fixed fraction of their count.

    >>> softmax_share_of_score_flops(64)  # 1 / (4·64)
    0.00390625
    """
    d_head = require_positive_int(d_head, "d_head")
    d_head_v = d_head if d_head_v is None else require_positive_int(d_head_v, "d_head_v")
    return 1 / (2 * (d_head + d_head_v))


def kaplan_context_ratio(n_ctx: int, d_model: int, d_attn: int | None = None, d_ff: int | None = None) -> float:
    """Kaplan et al.'s context term over their parameter term, per layer.

    Per layer their forward cost is ``2·2·d_model·(2·d_attn + d_ff)`` for the
    weights plus ``2·n_ctx·d_attn`` for the context. With the standard shape
    ``d_attn = d_model``, ``d_ff = 4·d_model`` the ratio is ``n_ctx / (12·d_model)``,
    which is below one exactly when ``d_model > n_ctx/12``, their condition for
    leaving the context term out.

    >>> kaplan_context_ratio(1024, 768)  # GPT-2 small: 1024 / 9216
    0.1111111111111111
    >>> kaplan_context_ratio(12 * 768, 768)
    1.0
    """
    n_ctx = require_positive_int(n_ctx, "n_ctx")
    d_model = require_positive_int(d_model, "d_model")
    d_attn = d_model if d_attn is None else require_positive_int(d_attn, "d_attn")
    d_ff = 4 * d_model if d_ff is None else require_positive_int(d_ff, "d_ff")
    return (2 * n_ctx * d_attn) / (2 * 2 * d_model * (2 * d_attn + d_ff))


def kaplan_crossover_length(ffn_flops: int, d_attn: int) -> float:
    """Context length at which Kaplan et al.'s context term ``2·n·d_attn`` equals the FFN's FLOPs.

    Their term counts ``Q Kᵀ`` alone, so this is twice :func:`crossover_length`
    for heads whose value width equals their query/key width.

    >>> kaplan_crossover_length(ffn_flops_per_token(768, 3072), 768)
    6144.0
    """
    ffn_flops = _positive_number(ffn_flops, "ffn_flops")
    d_attn = require_positive_int(d_attn, "d_attn")
    return ffn_flops / (2 * d_attn)


def kaplan_forward_flops_per_token(n_params: int, n_layers: int, n_ctx: int, d_attn: int) -> int:
    """Kaplan et al.'s estimate ``C_forward ≈ 2N + 2·n_layer·n_ctx·d_attn``.

    ``N`` is the non-embedding parameter count. Their context term counts
    ``2·n_ctx·d_attn`` FLOPs per layer, half of :func:`attention_score_flops_per_token`:
    it is the ``Q Kᵀ`` product alone.

    >>> kaplan_forward_flops_per_token(100, 2, 10, 8)
    520
    """
    n_params = require_positive_int(n_params, "n_params")
    n_layers = require_positive_int(n_layers, "n_layers")
    n_ctx = require_positive_int(n_ctx, "n_ctx")
    d_attn = require_positive_int(d_attn, "d_attn")
    return 2 * n_params + 2 * n_layers * n_ctx * d_attn


#: The two ways of computing multi-head latent attention's scores (:func:`mla_score_widths`).
MLA_FORMS = ("unabsorbed", "absorbed")


def mla_score_widths(model, form: str = "unabsorbed") -> tuple[int, int]:
    """Per-head widths ``(query/key, value)`` in which latent attention's scores are computed.

    *Un-absorbed*, keys and values are first expanded from the latent, and each
    head compares ``qk_nope + qk_rope`` dimensions and sums values of width
    ``v_head``: DeepSeek-V3's 192 and 128. *Absorbed*, the key up-projection is
    folded into the query and the value up-projection into the output, as
    DeepSeek-V2's report notes they can be (its §2.1) and DeepSeek-V3's
    inference code does by default: each head then compares its query with the
    cached latent (``kv_lora_rank``) plus the shared rotary key
    (``qk_rope``) and sums the cached latents (``kv_lora_rank``), 576 and 512.

    >>> from ffnbook.models import get_model
    >>> deepseek = get_model("DeepSeek-V3")
    >>> mla_score_widths(deepseek), mla_score_widths(deepseek, "absorbed")
    ((192, 128), (576, 512))
    """
    model = check_model(model)
    require_choice(form, "form", MLA_FORMS)
    latent = model.latent_attention
    if latent is None:
        raise ValueError(f"model {model.name} does not use latent attention; its heads are {model.d_head} wide")
    if form == "unabsorbed":
        return latent.qk_nope_head_dim + latent.qk_rope_head_dim, latent.v_head_dim
    return latent.kv_lora_rank + latent.qk_rope_head_dim, latent.kv_lora_rank


def model_crossover(model, *, mla_form: str = "unabsorbed") -> dict:
    """Per-token FLOPs and the attention/FFN crossover for one model of ``ffnbook.models``.

    Uses the FFN of the model's mixture-of-experts layers if it has them
    (``experts_per_token`` routed plus ``n_shared_experts`` shared experts of
    width ``d_ff``), else its dense FFN. The heads' query/key and value widths
    (``d_head``, ``d_head_v``) come from the sheet; the heads need not split
    ``d_model`` (PaLM's do not). For latent attention (DeepSeek-V3) the widths
    depend on ``mla_form`` (:func:`mla_score_widths`): ``"unabsorbed"``, the
    default, scores in the expanded head widths; ``"absorbed"`` in the latent.
    ``crossover`` is ``None`` for models whose head size the sheet does not
    confirm, with the reason in ``note``.

    Also reported: ``context_length`` (the pre-training context, ``None`` if the
    sheet does not give it), ``attention_window`` (a window every layer keeps to,
    else ``None``; one on some layers only is in ``note``), ``attention_span``
    (the most positions a token's attention reaches: that window, else the context),
    ``beyond_context`` (whether the crossover lies beyond the training context)
    and ``reachable`` (whether any token's score cost can reach the FFN's
    within the span; ``False`` for a window shorter than the crossover).
    """
    model = check_model(model)
    require_choice(mla_form, "mla_form", MLA_FORMS)
    if model.is_moe:
        n_active = model.experts_per_token + model.n_shared_experts
        d_ff = model.d_ff
    else:
        n_active, d_ff = 1, model.d_ff_dense
    ffn = ffn_flops_per_token(model.d_model, d_ff, gated=model.gated, n_active=n_active)
    row = {
        "model": model.name,
        "ffn_type": model.ffn_type,
        "ffn_label": model.ffn_type_label,
        "gated": model.gated,
        "d_model": model.d_model,
        "n_heads": model.n_heads,
        "d_head": model.d_head,
        "d_head_v": model.d_head_v,
        "d_ff": d_ff,
        "n_active": n_active,
        "ffn_flops": ffn,
        "d_attn": None,
        "crossover": None,
        "crossover_over_d_ff": None,
        "note": "",
        "context_length": model.context_length,
        "attention_span": model.attention_span,
        "attention_window": model.attention_window if model.window_on_every_layer else None,
        "beyond_context": None,
        "reachable": None,
    }
    if model.d_head is None:
        row["note"] = "head size unknown"
        return row
    d_head, d_head_v = model.d_head, model.d_head_v
    if model.latent_attention is not None:
        d_head, d_head_v = mla_score_widths(model, mla_form)
        row.update(d_head=d_head, d_head_v=d_head_v)
        row["note"] = f"MLA {'un-absorbed' if mla_form == 'unabsorbed' else 'absorbed'}, {d_head}/{d_head_v}-d heads"
    elif model.architecture == "encoder-decoder":
        row["note"] = "self-attention only"
    elif model.window_on_every_layer:
        row["note"] = "sliding window"
    elif model.attention_window is not None:
        row["note"] = f"window {model.attention_window:,} on {model.windowed_layers} of {model.n_layers} layers; the others full"
    crossover = crossover_length(ffn, model.n_heads, d_head, d_head_v)
    row.update(
        d_attn=model.n_heads * d_head,
        crossover=crossover,
        crossover_over_d_ff=crossover / d_ff,
    )
    if row["context_length"] is not None:
        row["beyond_context"] = crossover > row["context_length"]
    if row["attention_span"] is not None:
        row["reachable"] = crossover <= row["attention_span"]
    if row["attention_window"] is not None and not row["reachable"]:
        row["note"] = f"sliding window {row['attention_window']:,}: never reached"
    elif not model.attention_window_known:
        row["note"] = "some layers banded (size not given)"
    return row


def crossover_rows(models=None) -> list[dict]:
    """:func:`model_crossover` for every model of the fact sheet (or of ``models``)."""
    if models is None:
        models = load_models()
    models = require_sequence(models, "models", expected="a list of ffnbook.models.ModelConfig",
                              item=lambda m, label: check_model(m, label))
    return [model_crossover(m) for m in models]


def crossover_context_counts(rows=None) -> dict:
    """How the crossovers compare with the contexts the models were trained on.

    Counts (plain ints) over rows with both a crossover and a training context:
    ``known``, ``beyond_context`` (crossover longer than the context) and
    ``within_context``; ``never_reached`` counts rows whose sliding window is
    shorter than their crossover.

    >>> crossover_context_counts([{"crossover": 10.0, "context_length": 5, "beyond_context": True,
    ...                            "reachable": False, "attention_window": 4}])
    {'known': 1, 'beyond_context': 1, 'within_context': 0, 'never_reached': 1}
    """
    needed = {"crossover", "context_length", "beyond_context", "reachable", "attention_window"}

    def row(r, label):
        if not isinstance(r, dict) or not needed <= r.keys():
            raise TypeError(f"{label} must be a row of crossover_rows(), a dict with keys {sorted(needed)}, "
                            f"got {describe(r)}")
        return r

    rows = crossover_rows() if rows is None else require_sequence(rows, "rows", item=row)
    known = [r for r in rows if r["crossover"] is not None and r["context_length"] is not None]
    beyond = sum(bool(r["beyond_context"]) for r in known)
    never = sum(r["attention_window"] is not None and r["reachable"] is False for r in rows)
    return {"known": len(known), "beyond_context": beyond, "within_context": len(known) - beyond,
            "never_reached": never}


def crossover_table(models=None):
    """:func:`crossover_rows` as a table for a page; unknown values show as a dash."""
    from .display import MarkdownTable

    def maybe(fmt):
        return lambda v: "–" if v is None else format(v, fmt)

    rows = [
        dict(row, ffn=row["ffn_label"] + (f" × {row['n_active']}" if row["n_active"] > 1 else ""))
        for row in crossover_rows(models)
    ]
    return MarkdownTable(
        rows,
        [
            ("model", "model", "s"),
            ("FFN × active experts", "ffn", "s"),
            ("d_ff", "d_ff", ",d"),
            ("query/key width", "d_attn", maybe(",d")),
            ("crossover n*", "crossover", maybe(",.0f")),
            ("n* / d_ff", "crossover_over_d_ff", maybe(".2f")),
            ("trained context", "context_length", maybe(",d")),
            ("note", "note", "s"),
        ],
    )


class CountedFlops(NamedTuple):
    """FLOPs per token as counted by ``torch.utils.flop_counter`` on real modules."""

    ffn: int
    projections: int
    scores: int


def counted_flops_per_token(
    d_model: int, d_ff: int, n_heads: int, n_ctx: int, *, gated: bool = False, n_kv_heads: int | None = None
) -> CountedFlops:
    """Run an FFN and an attention sublayer under torch's FLOP counter and divide by ``n_ctx``.

    Everything is built on the ``meta`` device, so no memory is used and
    nothing is computed: the counter reads the shapes of each matrix product.
    It counts one multiply-add as two FLOPs, as this module does.
    """
    import torch
    from torch import nn
    from torch.utils.flop_counter import FlopCounterMode

    d_model = require_positive_int(d_model, "d_model")
    d_ff = require_positive_int(d_ff, "d_ff")
    n_ctx = require_positive_int(n_ctx, "n_ctx")
    gated = require_bool(gated, "gated")
    n_heads, d_head, _ = _head_dims(d_model, n_heads, None, None)
    n_kv = n_heads if n_kv_heads is None else require_positive_int(n_kv_heads, "n_kv_heads")
    if n_heads % n_kv:
        raise ValueError(f"n_heads={n_heads} must be divisible by n_kv_heads={n_kv}")
    require_tensor_size({"d_model": d_model, "d_ff": d_ff, "n_ctx": n_ctx, "n_heads": n_heads},
                        ("d_model", "d_model"), ("d_model", "d_ff"), ("n_ctx", "d_model"), ("n_ctx", "d_ff"),
                        ("n_heads", "n_ctx", "n_ctx"))

    with torch.device("meta"):
        x = torch.empty(1, n_ctx, d_model)
        up = nn.Linear(d_model, d_ff, bias=False)
        gate = nn.Linear(d_model, d_ff, bias=False) if gated else None
        down = nn.Linear(d_ff, d_model, bias=False)
        wq = nn.Linear(d_model, n_heads * d_head, bias=False)
        wk = nn.Linear(d_model, n_kv * d_head, bias=False)
        wv = nn.Linear(d_model, n_kv * d_head, bias=False)
        wo = nn.Linear(n_heads * d_head, d_model, bias=False)

    def count(fn) -> int:
        counter = FlopCounterMode(display=False)
        with counter:
            fn()
        return int(counter.get_total_flops())

    def run_ffn():
        hidden = torch.nn.functional.silu(gate(x)) * up(x) if gated else torch.relu(up(x))
        return down(hidden)

    def split(t, heads):  # (1, n, heads·d_head) -> (1, heads, n, d_head)
        return t.view(1, n_ctx, heads, d_head).transpose(1, 2)

    q = split(wq(x), n_heads)
    k = split(wk(x), n_kv).repeat_interleave(n_heads // n_kv, dim=1)
    v = split(wv(x), n_kv).repeat_interleave(n_heads // n_kv, dim=1)

    def run_scores():
        weights = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d_head), dim=-1)
        return weights @ v

    ffn = count(run_ffn)
    projections = count(lambda: (wq(x), wk(x), wv(x), wo(torch.empty(1, n_ctx, n_heads * d_head, device="meta"))))
    scores = count(run_scores)
    return CountedFlops(ffn // n_ctx, projections // n_ctx, scores // n_ctx)


# --- timing on the build machine ------------------------------------------------------------


class TimingResult(NamedTuple):
    """Median wall-clock seconds per forward call, one entry per sequence length."""

    seq_lens: list  #: sequence lengths measured
    ffn_seconds: list  #: the FFN sublayer on all positions
    attention_seconds: list  #: scores, softmax and weighted sum (projections excluded)
    d_model: int
    d_ff: int
    n_heads: int


def _median_seconds(fn, repeats: int, budget: float = 0.06) -> float:
    def timed() -> float:
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start

    first = timed()
    # A fast first call is a warm-up (allocation, kernel selection) and is
    # discarded; a slow one is dominated by arithmetic and counts as a sample.
    times = [] if first < 0.05 else [first]
    # Fast calls are repeated until `budget` seconds are spent (at most 25
    # times): on a busy machine a median of many short calls is steadier.
    target = max(repeats, min(25, int(budget / max(first, 1e-6))))
    while len(times) < target:
        times.append(timed())
    return float(statistics.median(times))


#: The longest sequence :func:`time_ffn_vs_attention` times (its score matrix alone holds
#: ``n × n`` float32 numbers, 4 GiB at this length).
MAX_TIMED_LENGTH = 32_768


def time_ffn_vs_attention(
    seq_lens: Sequence[int] = (64, 128, 256, 512, 1024, 2048, 4096),
    *,
    d_model: int = 256,
    d_ff: int = 1024,
    n_heads: int = 4,
    repeats: int = 3,
    seed: int = 0,
) -> TimingResult:
    """Time the FFN sublayer and attention's score computation at several sequence lengths.

    Runs torch in float32 on the CPU with one thread (so that the other
    cores' load disturbs the numbers less), taking the median of at least
    ``repeats`` calls after a warm-up call; calls faster than the budget allows
    are repeated more often (up to 25 times), and calls over 50 ms count as
    their own warm-up, to keep the total time down. The FFN is ``gelu(x W1 + b1) W2 + b2``; the
    attention part is ``softmax(Q Kᵀ/√d_head) V`` for each head on ready-made
    ``Q``, ``K``, ``V``, heads handled one after another so that only one
    ``n × n`` score matrix exists at a time. The thread setting is restored
    afterwards. Returns plain floats; they depend on the machine and its load.
    """
    import torch

    seq_lens = require_sequence(seq_lens, "seq_lens",
                                item=lambda n, label: require_positive_int(n, label, maximum=MAX_TIMED_LENGTH))
    if seq_lens != sorted(set(seq_lens)):
        raise ValueError(f"seq_lens must be an increasing sequence, got {seq_lens}")
    d_model = require_positive_int(d_model, "d_model", maximum=65_536)
    d_ff = require_positive_int(d_ff, "d_ff", maximum=262_144)
    repeats = require_positive_int(repeats, "repeats", maximum=1_000)
    n_heads, d_head, _ = _head_dims(d_model, n_heads, None, None)

    generator = torch.Generator().manual_seed(require_seed(seed))
    w1 = torch.randn(d_model, d_ff, generator=generator) / math.sqrt(d_model)
    b1 = torch.zeros(d_ff)
    w2 = torch.randn(d_ff, d_model, generator=generator) / math.sqrt(d_ff)
    b2 = torch.zeros(d_model)
    scale = 1.0 / math.sqrt(d_head)

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    ffn_times, attn_times = [], []
    try:
        with torch.inference_mode():
            for n in seq_lens:
                x = torch.randn(n, d_model, generator=generator)
                q, k, v = (torch.randn(n_heads, n, d_head, generator=generator) for _ in range(3))

                def ffn():
                    return torch.addmm(b2, torch.nn.functional.gelu(torch.addmm(b1, x, w1)), w2)  # noqa: B023 - timed in this iteration

                def scores():
                    return [torch.softmax(q[h] @ k[h].T * scale, dim=-1) @ v[h] for h in range(n_heads)]  # noqa: B023 - timed in this iteration

                ffn_times.append(_median_seconds(ffn, repeats))
                attn_times.append(_median_seconds(scores, repeats))
    finally:
        torch.set_num_threads(threads)
    return TimingResult(seq_lens, ffn_times, attn_times, d_model, d_ff, n_heads)


def _check_timing(timing) -> TimingResult:
    """A :class:`TimingResult` with one positive time per length, lengths increasing."""
    if not isinstance(timing, TimingResult):
        raise TypeError(f"timing must be a TimingResult from time_ffn_vs_attention, got {describe(timing)}")
    lengths = require_sequence(timing.seq_lens, "timing.seq_lens", item=require_positive_int)
    ffn = require_sequence(timing.ffn_seconds, "timing.ffn_seconds", item=require_positive_number)
    attention = require_sequence(timing.attention_seconds, "timing.attention_seconds", item=require_positive_number)
    require_same_length({"timing.seq_lens": lengths, "timing.ffn_seconds": ffn,
                         "timing.attention_seconds": attention})
    if lengths != sorted(set(lengths)):
        raise ValueError(f"timing.seq_lens must increase, got {lengths}")
    for field in ("d_model", "d_ff", "n_heads"):
        require_positive_int(getattr(timing, field), f"timing.{field}")
    return TimingResult(lengths, ffn, attention, timing.d_model, timing.d_ff, timing.n_heads)


def measured_crossover(timing: TimingResult) -> float | None:
    """Sequence length where measured attention time first exceeds the FFN's.

    Interpolates linearly in log–log coordinates between the two measured
    lengths that bracket the first sign change of ``attention − ffn``. Returns
    ``None`` if attention never overtakes the FFN in the measured range, and
    the first length if it is already slower there.

    >>> t = TimingResult([100, 1000], [1.0, 10.0], [0.1, 100.0], 8, 32, 1)
    >>> round(measured_crossover(t))
    316
    """
    pairs = list(zip(*_check_timing(timing)[:3]))
    if pairs[0][2] >= pairs[0][1]:
        return float(pairs[0][0])
    for (n0, f0, a0), (n1, f1, a1) in zip(pairs, pairs[1:]):
        if a1 >= f1:
            g0, g1 = math.log(a0 / f0), math.log(a1 / f1)  # log ratio crosses zero
            t = g0 / (g0 - g1)
            return float(math.exp(math.log(n0) + t * (math.log(n1) - math.log(n0))))
    return None


def flop_model_seconds(timing: TimingResult) -> tuple[list, list]:
    """The FLOP model's prediction of both curves, in seconds.

    One constant, the FFN's median measured throughput (FLOPs per second),
    converts FLOPs to seconds for both sublayers, so the predicted curves
    cross exactly where the FLOP counts do, at ``n = d_ff``.
    """
    timing = _check_timing(timing)
    ffn = [n * ffn_flops_per_token(timing.d_model, timing.d_ff) for n in timing.seq_lens]
    attn = [
        n * attention_score_flops_per_token(n, timing.n_heads, d_model=timing.d_model)
        for n in timing.seq_lens
    ]
    rate = statistics.median(f / s for f, s in zip(ffn, timing.ffn_seconds))
    return [f / rate for f in ffn], [a / rate for a in attn]


@styled
def timing_figure(timing: TimingResult) -> BookFigure:
    """Log–log plot of measured FFN and attention-score time against sequence length.

    Dashed lines are the FLOP model scaled by the FFN's measured throughput;
    vertical lines mark the FLOP-model crossover (``d_ff``) and the measured
    one.
    """
    timing = _check_timing(timing)
    fig = new_figure(7.0, 4.4)
    ax = fig.add_subplot()
    ffn_pred, attn_pred = flop_model_seconds(timing)
    ms = 1e3
    ax.loglog(timing.seq_lens, [s * ms for s in timing.ffn_seconds], "o-", color=FFN_COLOUR,
              label="FFN, measured")
    ax.loglog(timing.seq_lens, [s * ms for s in timing.attention_seconds], "s-", color=ATTENTION_COLOUR,
              label="attention scores, measured")
    ax.loglog(timing.seq_lens, [s * ms for s in ffn_pred], "--", color=FFN_COLOUR, alpha=0.7,
              label="FFN, FLOP model")
    ax.loglog(timing.seq_lens, [s * ms for s in attn_pred], "--", color=ATTENTION_COLOUR, alpha=0.7,
              label="attention scores, FLOP model")
    ax.axvline(timing.d_ff, color=PALETTE[6], linestyle=":", linewidth=1.2)
    ax.annotate(f"FLOP model\ncrossover n = d_ff = {timing.d_ff}", (timing.d_ff, 0.03),
                xycoords=("data", "axes fraction"), xytext=(4, 0), textcoords="offset points",
                fontsize=9, va="bottom")
    crossing = measured_crossover(timing)
    if crossing is not None:
        ax.axvline(crossing, color=PALETTE[2], linestyle="-.", linewidth=1.2)
        ax.annotate(f"measured\ncrossover ≈ {crossing:,.0f}", (crossing, 0.97),
                    xycoords=("data", "axes fraction"), xytext=(-4, 0), textcoords="offset points",
                    fontsize=9, va="top", ha="right")
    ax.set_xscale("log", base=2)
    ax.set_xticks(timing.seq_lens, [str(n) for n in timing.seq_lens])
    ax.minorticks_off()
    ax.set_xlabel("sequence length n (tokens, log scale)")
    ax.set_ylabel("time per forward call (ms, log scale)")
    ax.set_title(f"FFN vs attention scores, d_model = {timing.d_model}, d_ff = {timing.d_ff}")
    ax.legend(loc="upper left", fontsize=9)
    return BookFigure(fig, _timing_alt(timing, crossing))


def _timing_alt(timing: TimingResult, crossing: float | None) -> str:
    """The timing figure's alt text, from the same measurements it plots."""
    try:
        ffn_slope, attention_slope = growth_exponents(timing)
        slopes = (f"The FFN's measured times rise along a line of fitted slope {ffn_slope:.2f}, attention's "
                  f"along a steeper one of slope {attention_slope:.2f}")
    except ValueError:  # too few long sequences to fit a slope
        slopes = "The FFN's measured times rise more slowly than attention's"
    measured = ("the measured curves do not cross in this range" if crossing is None
                else f"a dash-dotted line marks where the measured curves cross, at about {crossing:,.0f} tokens")
    return (
        f"Log-log plot of time per forward call against sequence length, from {timing.seq_lens[0]:,} "
        f"to {timing.seq_lens[-1]:,} tokens, for an FFN with d_model {timing.d_model:,} and d_ff "
        f"{timing.d_ff:,} and for attention's scores with {timing.n_heads} heads. {slopes}; dashed lines "
        "show the FLOP model's prediction for each. A dotted vertical "
        f"line at d_ff marks where the FLOP model puts the crossing, and {measured}."
    )


def growth_exponents(timing: TimingResult, min_len: int = 256) -> tuple[float, float]:
    """Least-squares slopes of log(time) against log(n) for the FFN and attention.

    Only lengths ``>= min_len`` are used, because at short lengths fixed
    per-call overheads flatten both curves. A linear cost has slope 1, a
    quadratic one slope 2.

    >>> t = TimingResult([256, 512, 1024], [1.0, 2.0, 4.0], [1.0, 4.0, 16.0], 8, 32, 1)
    >>> [round(s, 6) for s in growth_exponents(t)]
    [1.0, 2.0]
    """
    timing = _check_timing(timing)
    min_len = require_positive_int(min_len, "min_len")
    points = [(n, f, a) for n, f, a in zip(timing.seq_lens, timing.ffn_seconds, timing.attention_seconds)
              if n >= min_len]
    if len(points) < 2:
        raise ValueError(f"need at least two lengths >= min_len={min_len}, got {len(points)}")

    def slope(values):
        xs = [math.log(n) for n, *_ in points]
        ys = [math.log(v) for v in values]
        mx, my = statistics.fmean(xs), statistics.fmean(ys)
        return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)

    return slope([f for _, f, _ in points]), slope([a for _, _, a in points])
