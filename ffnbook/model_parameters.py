"""Where the parameters of a whole real model live: embeddings, attention, FFN.

:func:`parameter_breakdown` turns a row of the fact sheet
(:class:`ffnbook.models.ModelConfig`) into counts per kind of layer, using the
per-sublayer formulas of :mod:`ffnbook.parameters`. Everything it needs about
a model is a column of the sheet: the shapes of the blocks, and the embedding
layout (whether the output head is tied to the token embeddings, a learned
position table, BERT's segment embeddings and pooler), each with its source.

Conventions, applied to every model:

* **Biases.** A model whose FFN has biases (the sheet's ``ffn_bias``) is
  assumed to have them in its attention projections too; bias-free FFNs go
  with bias-free attention. This holds for the models whose code the sheet
  cites (GPT-2, BERT, LLaMA, Mistral, DeepSeek-V3).
* **Norms.** Two norms per block (self-attention and FFN), three in the
  decoder blocks of encoder–decoder models (cross-attention too), and one more
  per stack (a final norm; BERT's sits after the embeddings instead). A norm
  with biases (LayerNorm) holds ``2·d_model`` numbers, a bias-free one (RMSNorm,
  T5's scale-only norm) ``d_model``. These choices reproduce GPT-2's and BERT's
  exact published counts; elsewhere the norms are far below 0.1% of the model,
  so a wrong guess cannot move any share shown in the book.
* **Positions.** A learned position table whose size the sheet marks ``?``
  (GPT-3: the paper gives its context, 2048, and says the architecture is
  GPT-2's, but does not state the table) is not counted; it would add
  ``2048·12288`` numbers, about 0.01% of 175B. T5's relative-position biases
  are not counted either: the sources do not give their size, and they are a
  handful of scalars per head.
* **MoE.** ``ffn`` counts every stored expert (routed and shared) plus the
  dense FFNs; ``ffn_active`` counts what one token passes through: its
  ``experts_per_token`` routed experts plus the shared ones. The router (one
  bias-free ``d_model × n_experts`` matrix per MoE layer, as in Mixtral's
  reference code) is applied to every token, so it counts in both totals. Any
  per-expert bias terms a gate may carry are not counted (at most
  ``n_experts`` numbers per layer).
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

from ._checks import (
    require_bool,
    require_nonnegative_int,
    require_number,
    require_positive_int,
    require_positive_number,
    require_sequence,
)
from .display import readable
from .models import LatentAttention, ModelConfig, check_model, get_model, reported_size, resolve_model  # noqa: F401  (mp.reported_size on pages)
from .parameters import attention_param_count, ffn_param_count, gated_ffn_param_count
from .plotting import ATTENTION_COLOUR, FFN_COLOUR, PALETTE, BookFigure, new_figure, styled


@readable
class ParameterBreakdown(NamedTuple):
    """A model's parameters by kind (plain ints), with the FFN's shares.

    ``total`` is the sum of ``embeddings``, ``attention``, ``ffn``, ``router``,
    ``norms`` and ``other``; ``total_active`` swaps ``ffn`` for ``ffn_active``.
    For a dense model the two are equal.
    """

    name: str
    embeddings: int  #: token embeddings, untied output head, learned position/segment tables
    attention: int  #: self-attention of every block, plus cross-attention in decoders of enc-dec models
    ffn: int  #: every stored FFN parameter (dense FFNs, all routed and shared experts)
    ffn_active: int  #: FFN parameters one token uses (equal to ``ffn`` for dense models)
    router: int  #: MoE routers (0 for dense models)
    norms: int  #: normalisation scales (and biases), see the module docstring
    other: int  #: anything else (BERT's pooler)
    total: int
    total_active: int

    @property
    def non_embedding(self) -> int:
        return self.total - self.embeddings

    @property
    def ffn_share(self) -> float:
        """FFN parameters as a fraction of all stored parameters."""
        return self.ffn / self.total

    @property
    def ffn_share_non_embedding(self) -> float:
        """FFN parameters as a fraction of the non-embedding parameters."""
        return self.ffn / self.non_embedding

    @property
    def ffn_share_active(self) -> float:
        """FFN parameters a token uses, as a fraction of all parameters it uses."""
        return self.ffn_active / self.total_active

    @property
    def embedding_share(self) -> float:
        return self.embeddings / self.total

    @property
    def attention_share(self) -> float:
        return self.attention / self.total


def ffn_share_of_blocks(ffn_ratio: float = 4.0, *, gated: bool = False, kv_fraction: float = 1.0,
                        ffn_sublayers: int = 1, attention_sublayers: int = 1) -> float:
    """The FFN's share of a block's weights (biases and norms left out), from the shape alone.

    In units of ``d_model²`` an FFN of width ``ffn_ratio·d_model`` holds
    ``2·ffn_ratio`` (``3·ffn_ratio`` gated) and an attention sublayer
    ``2 + 2·kv_fraction`` (Q and O full, K and V scaled by the share of
    key/value heads). ``ffn_sublayers`` and ``attention_sublayers`` count them
    in the stretch of model considered: an encoder block and a decoder block of
    an encoder–decoder model hold two FFNs and three attention sublayers.

    >>> from fractions import Fraction
    >>> Fraction(ffn_share_of_blocks()).limit_denominator(100)  # 8 / (8 + 4)
    Fraction(2, 3)
    >>> Fraction(ffn_share_of_blocks(ffn_sublayers=2, attention_sublayers=3)).limit_denominator(100)
    Fraction(4, 7)
    """
    require_positive_number(ffn_ratio, "ffn_ratio")
    require_number(kv_fraction, "kv_fraction", low=0, high=1, low_open=True)
    gated = require_bool(gated, "gated")
    ffn_sublayers = require_nonnegative_int(ffn_sublayers, "ffn_sublayers")
    attention_sublayers = require_nonnegative_int(attention_sublayers, "attention_sublayers")
    if ffn_sublayers + attention_sublayers == 0:
        raise ValueError("ffn_sublayers and attention_sublayers must not both be zero")
    ffn = ffn_sublayers * (3 if gated else 2) * ffn_ratio
    attention = attention_sublayers * (2 + 2 * kv_fraction)
    return float(ffn / (ffn + attention))


def mla_param_count(
    d_model: int,
    n_heads: int,
    q_lora_rank: int,
    kv_lora_rank: int,
    qk_nope_head_dim: int,
    qk_rope_head_dim: int,
    v_head_dim: int,
) -> int:
    """Parameters of one multi-head latent attention sublayer (DeepSeek-V2/V3), no biases.

    Queries go through a low-rank bottleneck: ``d_model → q_lora_rank`` (then a
    norm of that width) ``→ n_heads·(qk_nope + qk_rope)``. Keys and values share
    one compressed latent: ``d_model → kv_lora_rank + qk_rope`` (the rotary part
    of the key bypasses the latent), a norm of width ``kv_lora_rank``, then
    ``kv_lora_rank → n_heads·(qk_nope + v_head)``. The output projection maps
    ``n_heads·v_head → d_model``. The two bottleneck norms are counted here; the
    block's own norms are not.

    >>> deepseek = get_model("DeepSeek-V3")
    >>> mla_param_count(deepseek.d_model, deepseek.n_heads, *deepseek.latent_attention)
    187107328
    """
    d_model, n_heads, q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim = (
        require_positive_int(value, name) for value, name in (
            (d_model, "d_model"), (n_heads, "n_heads"), (q_lora_rank, "q_lora_rank"),
            (kv_lora_rank, "kv_lora_rank"), (qk_nope_head_dim, "qk_nope_head_dim"),
            (qk_rope_head_dim, "qk_rope_head_dim"), (v_head_dim, "v_head_dim")))
    qk_head = qk_nope_head_dim + qk_rope_head_dim
    query = d_model * q_lora_rank + q_lora_rank + q_lora_rank * n_heads * qk_head
    key_value = (
        d_model * (kv_lora_rank + qk_rope_head_dim)
        + kv_lora_rank
        + kv_lora_rank * n_heads * (qk_nope_head_dim + v_head_dim)
    )
    output = n_heads * v_head_dim * d_model
    return query + key_value + output


def with_tied_head(model: ModelConfig, tied: bool = True) -> ModelConfig:
    """``model`` with its output head tied to the token embeddings (or untied): a what-if.

    Tying drops the head's own ``vocab_size × d_model`` matrix, untying adds it;
    nothing else changes.

    >>> llama = get_model("LLaMA-1 7B")
    >>> untied, tied = parameter_breakdown(llama), parameter_breakdown(with_tied_head(llama))
    >>> untied.total - tied.total == llama.vocab_size * llama.d_model
    True
    """
    model = check_model(model)
    return dataclasses.replace(model, tied_embeddings=require_bool(tied, "tied"))


def _check_model(model, name: str = "model") -> ModelConfig:
    model = check_model(model, name)
    if model.d_head is None:
        raise ValueError(
            f"{name} is {model.name}, whose attention head size the fact sheet does not confirm "
            "(d_head is '?'), so its attention cannot be counted; choose another model"
        )
    return model


def countable(model: ModelConfig) -> bool:
    """Whether :func:`parameter_breakdown` can count ``model``: the sheet confirms its head size.

    The heads need not split ``d_model`` (PaLM's 48 heads of 256 on a width of
    18,432 do not): queries are counted ``n_heads·d_head`` wide.

    >>> countable(get_model("GPT-2 small")), countable(get_model("PaLM 540B"))
    (True, True)
    """
    model = check_model(model)
    return model.d_head is not None


def model_ffn_param_count(model: ModelConfig, d_ff: int | None = None) -> int:
    """Parameters of one FFN of ``model`` (one expert, for a mixture of experts), gated or classic.

    ``d_ff`` defaults to the model's dense FFN width; the FFN's type and
    biases come from the sheet.

    >>> model_ffn_param_count(get_model("T5-base v1.0")) == 2 * 768 * 3072
    True
    >>> model_ffn_param_count(get_model("LLaMA-1 7B")) == 3 * 4096 * 11008
    True
    """
    model = check_model(model)
    count = gated_ffn_param_count if model.gated else ffn_param_count
    return count(model.d_model, model.d_ff_dense if d_ff is None else d_ff, bias=model.ffn_bias)


def _one_attention(model: ModelConfig) -> int:
    if model.latent_attention is not None:
        return mla_param_count(model.d_model, model.n_heads, *model.latent_attention)
    return attention_param_count(model.d_model, model.n_heads, model.n_kv_heads, bias=model.ffn_bias,
                                 d_head=model.d_head)


def parameter_breakdown(model: ModelConfig) -> ParameterBreakdown:
    """Count a real model's parameters by kind, from its row of the fact sheet.

    Parameters
    ----------
    model:
        A :class:`~ffnbook.models.ModelConfig`, e.g. ``get_model("Mixtral 8x7B")``.
        A model it cannot count (:func:`countable`: one whose head size the
        sheet does not confirm) is refused.

    Returns
    -------
    ParameterBreakdown
        Plain ints per kind, plus share properties such as ``ffn_share``.

    Examples
    --------
    >>> gpt2 = parameter_breakdown(get_model("GPT-2 small"))
    >>> gpt2.total  # the corrected count in OpenAI's gpt-2 README is "124M"
    124439808
    >>> bert = parameter_breakdown(get_model("BERT-base"))
    >>> bert.total
    109482240
    >>> mixtral = parameter_breakdown(get_model("Mixtral 8x7B"))
    >>> round(mixtral.total / 1e9, 1), round(mixtral.total_active / 1e9, 1)
    (46.7, 12.9)
    """
    model = _check_model(model)
    d = model.d_model
    norm_size = 2 * d if model.ffn_bias else d

    embeddings = model.vocab_size * d * (1 if model.tied_embeddings else 2)
    embeddings += ((model.position_table or 0) + model.segment_types) * d

    # Every block has self-attention; decoder blocks of an encoder-decoder model
    # add cross-attention of the same shape.
    n_cross = model.n_decoder_layers if model.architecture == "encoder-decoder" else 0
    attention = (model.n_layers + n_cross) * _one_attention(model)

    dense_ffn = model.n_dense_layers * model_ffn_param_count(model)
    expert = model_ffn_param_count(model, model.d_ff)
    ffn = dense_ffn + model.n_moe_layers * (model.n_experts + model.n_shared_experts) * expert
    ffn_active = dense_ffn + model.n_moe_layers * (
        model.experts_per_token + model.n_shared_experts
    ) * expert
    router = model.n_moe_layers * model.n_experts * d

    n_stacks = 2 if model.architecture == "encoder-decoder" else 1
    norms = norm_size * (2 * model.n_layers + n_cross + n_stacks)
    other = (d * d + d) if model.pooler else 0

    rest = embeddings + attention + router + norms + other
    return ParameterBreakdown(
        name=model.name,
        embeddings=int(embeddings),
        attention=int(attention),
        ffn=int(ffn),
        ffn_active=int(ffn_active),
        router=int(router),
        norms=int(norms),
        other=int(other),
        total=int(rest + ffn),
        total_active=int(rest + ffn_active),
    )


def block_breakdown(model: ModelConfig, cross_attention: bool | None = None) -> dict:
    """Parameters of one block of ``model`` by kind, from the formulas.

    The block is an MoE block for MoE models (DeepSeek-V3: one of its 58 MoE
    blocks), otherwise a dense one. ``cross_attention`` (default: whether the
    model is encoder–decoder) adds a decoder block's cross-attention and its
    norm. Keys: ``attention``, ``ffn``, ``ffn_active``, ``router``, ``norms``,
    ``total``, ``total_active`` (plain ints).

    >>> block_breakdown(get_model("GPT-2 small"))["total"]
    7087872
    """
    model = _check_model(model)
    if cross_attention is None:
        cross_attention = model.architecture == "encoder-decoder"
    cross_attention = require_bool(cross_attention, "cross_attention")
    n_attn = 2 if cross_attention else 1
    attention = n_attn * _one_attention(model)
    norms = (n_attn + 1) * (2 * model.d_model if model.ffn_bias else model.d_model)
    if model.is_moe:
        expert = model_ffn_param_count(model, model.d_ff)
        ffn = (model.n_experts + model.n_shared_experts) * expert
        ffn_active = (model.experts_per_token + model.n_shared_experts) * expert
        router = model.n_experts * model.d_model
    else:
        ffn = ffn_active = model_ffn_param_count(model)
        router = 0
    rest = attention + router + norms
    return {
        "attention": int(attention),
        "ffn": int(ffn),
        "ffn_active": int(ffn_active),
        "router": int(router),
        "norms": int(norms),
        "total": int(rest + ffn),
        "total_active": int(rest + ffn_active),
    }


def reference_block(model: ModelConfig, cross_attention: bool | None = None):
    """One block of ``model`` assembled from plain ``torch.nn`` layers on the ``meta`` device.

    An independent check of :func:`block_breakdown`: nothing here uses the
    formulas, only layer shapes. Returns an ``nn.ModuleDict`` with
    ``attention`` (Q, K, V, O projections, or DeepSeek's latent-attention
    layers), optionally ``cross_attention``, the FFN as ``ffn`` (``up``,
    ``down`` and, if gated, ``gate``) or, for MoE models, ``experts`` (an
    ``nn.ModuleList``), ``shared_experts`` and ``router``, and ``norms``
    (``LayerNorm`` with bias where the model has biases, else ``RMSNorm``).
    The ``meta`` device records shapes only, so even a DeepSeek-V3 block
    costs no memory.
    """
    import torch
    from torch import nn

    model = _check_model(model)
    if cross_attention is None:
        cross_attention = model.architecture == "encoder-decoder"
    cross_attention = require_bool(cross_attention, "cross_attention")
    d, bias = model.d_model, model.ffn_bias

    def attention():
        h = model.n_heads
        if model.latent_attention is not None:
            c = model.latent_attention
            return nn.ModuleDict({
                "q_down": nn.Linear(d, c.q_lora_rank, bias=False),
                "q_norm": nn.RMSNorm(c.q_lora_rank),
                "q_up": nn.Linear(c.q_lora_rank, h * model.d_head, bias=False),
                "kv_down": nn.Linear(d, c.kv_lora_rank + c.qk_rope_head_dim, bias=False),
                "kv_norm": nn.RMSNorm(c.kv_lora_rank),
                "kv_up": nn.Linear(c.kv_lora_rank, h * (c.qk_nope_head_dim + c.v_head_dim), bias=False),
                "out": nn.Linear(h * c.v_head_dim, d, bias=False),
            })
        d_kv = model.n_kv_heads * model.d_head
        return nn.ModuleDict({
            "q": nn.Linear(d, h * model.d_head, bias=bias),
            "k": nn.Linear(d, d_kv, bias=bias),
            "v": nn.Linear(d, d_kv, bias=bias),
            "out": nn.Linear(h * model.d_head, d, bias=bias),
        })

    def ffn(width):
        layers = {"up": nn.Linear(d, width, bias=bias), "down": nn.Linear(width, d, bias=bias)}
        if model.gated:
            layers["gate"] = nn.Linear(d, width, bias=bias)
        return nn.ModuleDict(layers)

    def norm():
        return nn.LayerNorm(d) if bias else nn.RMSNorm(d)

    with torch.device("meta"):
        block = nn.ModuleDict({"attention": attention()})
        if cross_attention:
            block["cross_attention"] = attention()
        if model.is_moe:
            block["experts"] = nn.ModuleList(ffn(model.d_ff) for _ in range(model.n_experts))
            block["shared_experts"] = nn.ModuleList(ffn(model.d_ff) for _ in range(model.n_shared_experts))
            block["router"] = nn.Linear(d, model.n_experts, bias=False)
        else:
            block["ffn"] = ffn(model.d_ff_dense)
        block["norms"] = nn.ModuleList(norm() for _ in range(3 if cross_attention else 2))
    return block


def count_reference_block(model: ModelConfig, cross_attention: bool | None = None) -> dict:
    """Count :func:`reference_block` by kind, in the keys of :func:`block_breakdown`.

    The active count keeps the router, the shared experts and the first
    ``experts_per_token`` routed experts (all experts have the same size, so
    which ones does not matter).
    """
    from .parameters import count_module_parameters as count

    block = reference_block(model, cross_attention)
    attention = count(block["attention"]) + (
        count(block["cross_attention"]) if "cross_attention" in block else 0
    )
    norms = count(block["norms"])
    if "experts" in block:
        shared = count(block["shared_experts"])
        ffn = count(block["experts"]) + shared
        ffn_active = sum(count(e) for e in list(block["experts"])[: model.experts_per_token]) + shared
        router = count(block["router"])
    else:
        ffn = ffn_active = count(block["ffn"])
        router = 0
    total = count(block)
    return {
        "attention": attention,
        "ffn": ffn,
        "ffn_active": ffn_active,
        "router": router,
        "norms": norms,
        "total": total,
        "total_active": total - ffn + ffn_active,
    }


#: The models of the chapter's "where the parameters live" figure, in order.
FIGURE_MODELS = (
    "GPT-2 small",
    "BERT-base",
    "GPT-3 175B",
    "T5-base v1.0",
    "T5-base v1.1",
    "LLaMA-1 7B",
    "Llama-2 7B",
    "Llama-2 70B",
    "Llama-3 8B",
    "Mistral 7B",
    "Mixtral 8x7B",
    "DeepSeek-V3",
)


def share_rows(names=FIGURE_MODELS) -> list[dict]:
    """One row per model (two for MoE models: stored and per-token active).

    Each row has ``label``, the counts and the fractions ``embeddings``,
    ``attention``, ``ffn`` and ``rest`` (router, norms, pooler) of its total;
    ``ffn_non_embedding`` is the FFN's share once embeddings are set aside.
    """
    models = [resolve_model(name, f"names[{i}]") for i, name in enumerate(
        require_sequence(names, "names", expected="a list or tuple of model names"))]
    for i, m in enumerate(models):
        _check_model(m, f"names[{i}]")
    rows = []
    for model in models:
        name = model.name
        b = parameter_breakdown(model)
        views = [("", b.ffn, b.total)]
        if b.ffn != b.ffn_active:
            views = [(" (stored)", b.ffn, b.total), (" (active)", b.ffn_active, b.total_active)]
        for suffix, ffn, total in views:
            rest = b.router + b.norms + b.other
            rows.append(
                {
                    "label": name + suffix,
                    "total": total,
                    "embeddings": b.embeddings / total,
                    "attention": b.attention / total,
                    "ffn": ffn / total,
                    "rest": rest / total,
                    "ffn_non_embedding": ffn / (total - b.embeddings),
                }
            )
    return rows


def share_table(names=FIGURE_MODELS):
    """:func:`share_rows` as a table for a page (percentages, totals in billions)."""
    from .display import MarkdownTable

    def pct(x):
        return f"{100 * x:.1f}%"

    return MarkdownTable(
        share_rows(names),
        [
            ("model", "label", str),
            ("parameters (B)", "total", lambda n: f"{n / 1e9:.3f}"),
            ("embeddings", "embeddings", pct),
            ("attention", "attention", pct),
            ("FFN", "ffn", pct),
            ("FFN, non-embedding", "ffn_non_embedding", pct),
        ],
    )


@styled
def share_figure(names=FIGURE_MODELS) -> BookFigure:
    """Stacked horizontal bars: each model's parameters split into embeddings, attention, FFN."""
    rows = share_rows(names)
    fig = new_figure(7.5, 0.42 * len(rows) + 1.4)
    ax = fig.add_subplot()
    labels = [r["label"] for r in rows]
    y = list(range(len(rows)))[::-1]  # first model at the top
    left = [0.0] * len(rows)
    # The FFN comes first, so where its bar ends can be read against the
    # two-thirds line directly.
    parts = [
        ("FFN", "ffn", FFN_COLOUR),
        ("attention", "attention", ATTENTION_COLOUR),
        ("embeddings", "embeddings", PALETTE[4]),
        ("router, norms, other", "rest", "#999999"),
    ]
    for label, key, colour in parts:
        widths = [100 * r[key] for r in rows]
        ax.barh(y, widths, left=left, color=colour, label=label, height=0.7, edgecolor="white")
        left = [a + b for a, b in zip(left, widths)]
    for yi, r in zip(y, rows):
        ax.text(1.5, yi, f"{100 * r['ffn']:.0f}%", va="center", ha="left",
                color="#111111", fontsize=9, fontweight="bold")  # 4.9:1 on the orange bar
    classic_share = 100 * ffn_share_of_blocks()  # two-thirds: a classic block's FFN share
    ax.axvline(classic_share, color="#222222", linestyle="--", linewidth=1.2)
    ax.text(classic_share, len(rows) - 0.45, " two-thirds", fontsize=9, va="bottom")
    ax.set_yticks(y, labels)
    ax.set_xlim(0, 100)
    ax.set_ylim(-0.6, len(rows) + 0.2)
    ax.set_xlabel("share of the model's parameters (%)")
    ax.grid(axis="y", visible=False)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=4, fontsize=9)
    shares = "; ".join(
        f"{r['label']}: FFN {100 * r['ffn']:.0f}%, attention {100 * r['attention']:.0f}%, "
        f"embeddings {100 * r['embeddings']:.0f}%"
        for r in rows
    )
    description = (
        f"Stacked horizontal bars, one for each of {len(rows)} model views, each split into FFN (orange, "
        "leftmost), attention (blue), embeddings (yellow) and a grey remainder, with a dashed line at "
        f"two-thirds. {shares}."
    )
    return BookFigure(fig, description)


def moe_rows() -> list[dict]:
    """Every mixture of experts of the fact sheet: its experts and its stored and active parameters.

    Keys: ``model``, ``routed``, ``shared``, ``per_token`` (routed experts a
    token uses), ``expert_width`` (``d_ff`` of one expert), ``moe_layers`` and
    ``layers``, ``stored`` and ``active`` (:func:`parameter_breakdown`'s
    totals), ``active_fraction`` and ``ffn_active_share`` (the experts' and
    dense FFNs' share of what a token uses). In the sheet's order.

    >>> [r["model"] for r in moe_rows()][:2]
    ['Mixtral 8x7B', 'DeepSeek-V3']
    """
    from .models import load_models

    rows = []
    for model in load_models():
        if not model.is_moe:
            continue
        b = parameter_breakdown(model)
        rows.append({
            "model": model.name, "routed": model.n_experts, "shared": model.n_shared_experts,
            "per_token": model.experts_per_token, "expert_width": model.d_ff,
            "moe_layers": model.n_moe_layers, "layers": model.n_layers,
            "stored": b.total, "active": b.total_active, "active_fraction": b.total_active / b.total,
            "ffn_active_share": b.ffn_active / b.total_active,
        })
    return rows


def moe_table():
    """:func:`moe_rows` as a table for a page (parameters in billions)."""
    from .display import MarkdownTable

    return MarkdownTable(
        moe_rows(),
        [
            ("model", "model", "s"),
            ("routed experts", "routed", "d"),
            ("shared", "shared", "d"),
            ("routed per token", "per_token", "d"),
            ("expert width", "expert_width", ",d"),
            ("MoE layers", "moe_layers", "d"),
            ("of layers", "layers", "d"),
            ("stored (B)", "stored", lambda n: f"{n / 1e9:.1f}"),
            ("active (B)", "active", lambda n: f"{n / 1e9:.2f}"),
            ("active share", "active_fraction", ".1%"),
            ("FFN share of active", "ffn_active_share", ".1%"),
        ],
    )
