"""What generating text costs: bytes read per decoded token, the KV cache, and 6N.

When a decoder generates text one token at a time (batch size 1), every
weight it uses is read from memory once for that token and takes part in one
multiply-add: two FLOPs for every two bytes in bfloat16. When a processor
can do more arithmetic per second than that many bytes per second can feed
(:func:`measure_machine_balance` measures it on the build machine), the time
per token is set by the bytes read, not by the FLOPs. This module counts those
bytes for the models of the fact sheet:

* the **weights** each token uses: the FFN (the active experts, for a mixture
  of experts), attention's projections, the output head (a
  ``vocab_size × d_model`` matrix, read in full to score every token of the
  vocabulary) and one row of each embedding table;
* the **KV cache**: the keys and values attention stored for every earlier
  position, read again by every new token. The FFN keeps nothing: it is a
  function of the current token alone, so it needs no cache.

It also gives Kaplan et al.'s training estimate of ``6N`` FLOPs per token
(forward ``2N``, backward about twice that), with ``N`` the non-embedding
parameters a token uses, and :func:`measure_machine_balance`, which measures
how many FLOPs one thread of the build machine does per byte it moves.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from typing import NamedTuple

from ._checks import require_choice, require_positive_int, require_sequence
from .model_parameters import parameter_breakdown
from .models import ModelConfig, check_model, get_model, resolve_model  # noqa: F401  (get_model: the doctests)
from .plotting import OTHER_COLOURS, BookFigure, new_figure, styled

#: Bytes per stored number in each format (16-bit bfloat16 and float16, 32-bit float32).
BYTES_PER_VALUE = {"bfloat16": 2, "float16": 2, "float32": 4}
#: Bits per stored weight of each format that :func:`decode_bytes_per_token` accepts for the
#: FFN, the floating-point ones above and 8- and 4-bit integers; the per-group scales that
#: quantised formats store beside the weights are not counted.
BITS_PER_WEIGHT = {"bfloat16": 16, "float16": 16, "float32": 32, "int8": 8, "int4": 4}

#: Decoder models shown in the chapter's figure of bytes read per token.
DECODE_MODELS = ("GPT-2 small", "LLaMA-1 7B", "Llama-2 70B", "Mistral 7B", "Mixtral 8x7B", "DeepSeek-V3")


def _check_decoder(model, name: str = "model") -> ModelConfig:
    model = check_model(model, name)
    if model.architecture != "decoder":
        raise ValueError(f"{name} is {model.name}, not a decoder-only model; token-by-token decoding "
                         "is counted for decoder-only models")
    if model.d_head is None:
        raise ValueError(f"{name} is {model.name}, whose attention head size the fact sheet does not confirm, "
                         "so its KV cache cannot be counted")
    if not model.attention_window_known:
        raise ValueError(f"{name} is {model.name}, which restricts some attention layers to a band of "
                         "unknown size, so its KV-cache reads cannot be counted")
    return model


def _bytes(dtype: str) -> int:
    return BYTES_PER_VALUE[require_choice(dtype, "dtype", BYTES_PER_VALUE)]


def _decoders(names) -> list[ModelConfig]:
    """The sheet's models called ``names``, each a decoder with a known training context."""
    models = []
    for i, name in enumerate(require_sequence(names, "names", expected="a list or tuple of model names")):
        model = _check_decoder(resolve_model(name, f"names[{i}]"), f"names[{i}]")
        if model.context_length is None:
            raise ValueError(f"names[{i}] is {model.name}, whose training context the sheet does not give")
        models.append(model)
    return models


def kv_cache_values_per_position(model: ModelConfig) -> int:
    """Numbers the KV cache holds for one position, summed over all layers.

    Standard and grouped-query attention store a key and a value of
    ``n_kv_heads · d_head`` numbers per layer. DeepSeek-V3's latent attention
    stores only its compressed latent (``kv_lora_rank``) and the rotary key
    (``qk_rope_head_dim``) per layer (its report, §2.1.1).

    >>> kv_cache_values_per_position(get_model("Llama-2 70B"))  # 80 · 2 · 8 · 128
    163840
    >>> kv_cache_values_per_position(get_model("DeepSeek-V3"))  # 61 · (512 + 64)
    35136
    """
    model = _check_decoder(model)
    if model.latent_attention is not None:
        per_layer = model.latent_attention.kv_lora_rank + model.latent_attention.qk_rope_head_dim
    else:
        per_layer = 2 * model.n_kv_heads * model.d_head
    return model.n_layers * per_layer


class DecodeBytes(NamedTuple):
    """Bytes read from memory to decode one token at batch size 1, by kind."""

    model: str
    n_ctx: int  #: positions already in the context
    ffn: int  #: FFN weights a token uses (active experts only)
    attention: int  #: attention projections
    head_and_embeddings: int  #: output head plus one row of each embedding table
    other: int  #: norms and routers
    kv_cache: int  #: keys and values of the earlier positions (within the window)

    @property
    def weights(self) -> int:
        return self.ffn + self.attention + self.head_and_embeddings + self.other

    @property
    def total(self) -> int:
        return self.weights + self.kv_cache

    @property
    def ffn_share(self) -> float:
        """The FFN's share of all bytes read for this token."""
        return self.ffn / self.total

    @property
    def ffn_share_of_weights(self) -> float:
        """The FFN's share of the weight bytes alone (what a short context reads)."""
        return self.ffn / self.weights

    @property
    def kv_share(self) -> float:
        return self.kv_cache / self.total


def decode_bytes_per_token(model: ModelConfig, n_ctx: int, dtype: str = "bfloat16", *,
                           ffn_dtype: str | None = None) -> DecodeBytes:
    """Bytes read to decode one token with ``n_ctx`` earlier positions, every number in ``dtype``.

    The input embedding is a lookup, so only one row of each table is read; the
    output head is read in full (a tied head is the embedding matrix itself,
    read once for scoring). The KV cache of a layer that keeps to a window
    holds at most ``attention_window`` positions (Mistral's rolling buffer
    cache; gpt-oss's windowed layers, Llama 4's chunked ones); the model's
    other layers hold every earlier position.
    ``ffn_dtype`` (default ``dtype``) stores the FFN's weights in another format
    of :data:`BITS_PER_WEIGHT`, such as ``"int8"`` or ``"int4"``.

    >>> b = decode_bytes_per_token(get_model("GPT-2 small"), 1)
    >>> b.head_and_embeddings == 2 * (50257 * 768 + 2 * 768)  # head, one token row, one position row
    True
    >>> decode_bytes_per_token(get_model("GPT-2 small"), 1, ffn_dtype="int4").ffn * 4 == b.ffn
    True
    """
    model = _check_decoder(model)
    n_ctx = require_positive_int(n_ctx, "n_ctx")
    size = _bytes(dtype)
    ffn_bits = _bits(dtype if ffn_dtype is None else ffn_dtype, "ffn_dtype")
    counts = parameter_breakdown(model)
    rows_read = 1 + (1 if model.position_table else 0)
    head = model.vocab_size * model.d_model + rows_read * model.d_model
    windowed = model.windowed_layers
    cached_layers = (model.n_layers - windowed) * n_ctx + (windowed * min(n_ctx, model.attention_window)
                                                            if windowed else 0)
    return DecodeBytes(
        model=model.name,
        n_ctx=n_ctx,
        ffn=_weight_bytes(counts.ffn_active, ffn_bits),
        attention=size * counts.attention,
        head_and_embeddings=size * head,
        other=size * (counts.norms + counts.router + counts.other),
        kv_cache=size * cached_layers * (kv_cache_values_per_position(model) // model.n_layers),
    )


def _bits(fmt: str, name: str = "dtype") -> int:
    if fmt not in BITS_PER_WEIGHT:
        raise ValueError(f"{name} must be one of {', '.join(BITS_PER_WEIGHT)}, got {fmt!r}")
    return BITS_PER_WEIGHT[fmt]


def _weight_bytes(n_weights: int, bits: int) -> int:
    """Bytes that ``n_weights`` numbers of ``bits`` bits take, rounded up to whole bytes."""
    return -(-n_weights * bits // 8)


class StepBytes(NamedTuple):
    """Weight bytes read in one decoding step of a batch, for a mixture-of-experts model."""

    model: str
    batch_size: int  #: sequences decoded together, one new token each
    experts_per_layer: float  #: routed experts a step uses in each MoE layer (expected)
    n_experts: int  #: routed experts each MoE layer stores
    weights: float  #: expected bytes of weights read in the step
    stored: int  #: bytes of all the weights the model stores

    @property
    def per_token(self) -> float:
        """Weight bytes per generated token, the step's bytes shared by the batch."""
        return self.weights / self.batch_size

    @property
    def of_stored(self) -> float:
        """The step's weight bytes as a fraction of everything stored."""
        return self.weights / self.stored


def decode_step_weight_bytes(model: ModelConfig, batch_size: int, dtype: str = "bfloat16") -> StepBytes:
    """Expected weight bytes one decoding step reads when ``batch_size`` sequences advance together.

    Everything but the routed experts is read once for the whole batch
    (attention, dense FFNs, shared experts, routers, norms, the output head)
    plus one embedding row per token. In each MoE layer the step reads every
    routed expert that at least one token of the batch uses:
    :func:`ffnbook.moe.expected_distinct_experts` of them, on the assumption
    that tokens pick experts uniformly and independently. At batch size one
    this is :func:`decode_bytes_per_token`'s weight bytes; as the batch grows
    it approaches the model's stored size.

    >>> m = get_model("Mixtral 8x7B")
    >>> decode_step_weight_bytes(m, 1).weights == decode_bytes_per_token(m, 1).weights
    True
    """
    from .model_parameters import model_ffn_param_count
    from .moe import expected_distinct_experts

    model = _check_decoder(model)
    if not model.is_moe:
        raise ValueError(f"model {model.name} is a dense model; every step reads all its weights")
    batch_size = require_positive_int(batch_size, "batch_size")
    size = _bytes(dtype)
    counts = parameter_breakdown(model)
    expert = model_ffn_param_count(model, model.d_ff)
    rows_read = 1 + (1 if model.position_table else 0)
    # Read once per step: all but the embeddings and the routed experts, plus the whole output head
    # (tied or not, it scores every entry of the vocabulary, as in decode_bytes_per_token).
    shared = (counts.total - counts.embeddings - model.n_moe_layers * model.n_experts * expert
              + model.vocab_size * model.d_model)
    distinct = expected_distinct_experts(model.n_experts, model.experts_per_token, batch_size)
    weights = size * (shared + batch_size * rows_read * model.d_model + model.n_moe_layers * distinct * expert)
    return StepBytes(model.name, batch_size, distinct, model.n_experts, float(weights), int(size * counts.total))


def decode_rows(names: Sequence[str] = DECODE_MODELS, dtype: str = "bfloat16") -> list[dict]:
    """For each model: bytes per token at a one-position context and at its training context.

    Keys: ``model``, ``context`` (the training context), ``weights_gb``
    (gigabytes of weights read per token), ``ffn_share_short`` (the FFN's share
    of the bytes with almost no context), ``kv_gb`` and ``ffn_share_at_context``
    (with the full training context in the cache).
    """
    _bytes(dtype)
    rows = []
    for model in _decoders(names):
        name = model.name
        short = decode_bytes_per_token(model, 1, dtype)
        full = decode_bytes_per_token(model, model.context_length, dtype)
        rows.append({
            "model": name,
            "context": model.context_length,
            "weights_gb": short.weights / 1e9,
            "ffn_share_short": short.ffn_share_of_weights,
            "kv_gb": full.kv_cache / 1e9,
            "ffn_share_at_context": full.ffn_share,
        })
    return rows


def decode_table(names: Sequence[str] = DECODE_MODELS, dtype: str = "bfloat16"):
    """:func:`decode_rows` as a table for a page."""
    from .display import MarkdownTable

    return MarkdownTable(
        decode_rows(names, dtype),
        [
            ("model", "model", str),
            (f"weights read per token (GB, {dtype})", "weights_gb", ".2f"),
            ("FFN share of the weights", "ffn_share_short", ".1%"),
            ("training context", "context", ",d"),
            ("KV cache read at that context (GB)", "kv_gb", ".3f"),
            ("FFN share of all bytes at that context", "ffn_share_at_context", ".1%"),
        ],
    )


def training_flops_per_token(model: ModelConfig) -> int:
    """Kaplan et al.'s ``C ≈ 6N`` training FLOPs per token, ``N`` the non-embedding parameters a token uses.

    For a mixture of experts ``N`` counts the active experts. Context-dependent
    attention FLOPs are left out, as in the rule (their Section 2.1).

    >>> training_flops_per_token(get_model("GPT-2 small")) == 6 * (124439808 - (50257 + 1024) * 768)
    True
    """
    counts = parameter_breakdown(check_model(model))
    return 6 * (counts.total_active - counts.embeddings)


def ffn_share_of_training_flops(model: ModelConfig) -> float:
    """The FFN's share of :func:`training_flops_per_token`: active FFN weights over active non-embedding weights.

    >>> round(ffn_share_of_training_flops(get_model("GPT-3 175B")), 3)
    0.667
    """
    counts = parameter_breakdown(model)
    return counts.ffn_active / (counts.total_active - counts.embeddings)


@styled
def decode_share_figure(names: Sequence[str] = DECODE_MODELS, dtype: str = "bfloat16",
                        contexts: Sequence[int] | None = None) -> BookFigure:
    """The FFN's share of the bytes read per decoded token, against the context length.

    One line per model, from a one-position context to beyond the longest
    training context; a marker shows each model's training context.
    """
    if contexts is None:
        contexts = [2**k for k in range(0, 18)]
    contexts = require_sequence(contexts, "contexts", item=require_positive_int)
    models = _decoders(names)
    _bytes(dtype)
    fig = new_figure(7.2, 4.4)
    ax = fig.add_subplot()
    markers = "osD^vP"
    summary = []
    for i, model in enumerate(models):
        name = model.name
        shares = [100 * decode_bytes_per_token(model, n, dtype).ffn_share for n in contexts]
        colour = OTHER_COLOURS[i % len(OTHER_COLOURS)]
        ax.plot(contexts, shares, color=colour, label=name)
        at = decode_bytes_per_token(model, model.context_length, dtype).ffn_share
        ax.plot([model.context_length], [100 * at], markers[i % len(markers)], color=colour, markersize=7)
        summary.append(f"{name} {shares[0]:.0f}% with a one-position context, {100 * at:.0f}% at its "
                       f"training context of {model.context_length:,} and {shares[-1]:.0f}% at {contexts[-1]:,}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("positions already in the context (log scale)")
    ax.set_ylabel(f"FFN share of bytes read per token (%, {dtype})")
    ax.set_ylim(0, 100)
    ax.set_title("Decoding one token at batch size 1: where the bytes come from")
    ax.legend(loc="lower left", fontsize=9)
    alt = (
        "Line chart of the FFN weights' share of all bytes read to decode one token, against the number "
        f"of positions already in the context on a log scale from {contexts[0]:,} to {contexts[-1]:,}, "
        "with a marker at each model's training context. The share falls as the KV cache grows: "
        + "; ".join(summary) + "."
    )
    return BookFigure(fig, alt)


# --- a measurement on the build machine -------------------------------------------------------


def decode_flops_per_byte(dtype: str = "bfloat16", batch_size: int = 1) -> float:
    """Arithmetic intensity of a matrix product at ``batch_size`` tokens: FLOPs per byte of weights read.

    Each weight read takes part in one multiply-add (two FLOPs) per token of
    the batch, so the intensity is ``2·batch_size / bytes_per_value``.

    >>> decode_flops_per_byte("bfloat16"), decode_flops_per_byte("float32", 8)
    (1.0, 4.0)
    """
    batch_size = require_positive_int(batch_size, "batch_size")
    return 2 * batch_size / _bytes(dtype)


class MachineBalance(NamedTuple):
    """What one CPU thread of the build machine does per second, measured."""

    flops_per_second: float  #: float32 matrix product of two n × n matrices
    bytes_per_second: float  #: a large array copied (bytes read plus bytes written)

    @property
    def flops_per_byte(self) -> float:
        """FLOPs the thread can do in the time it moves one byte."""
        return self.flops_per_second / self.bytes_per_second


def measure_machine_balance(*, n: int = 1024, copy_mib: int = 128, repeats: int = 3) -> MachineBalance:
    """Measure one thread's matrix-product speed and memory-copy speed (medians of ``repeats``).

    The copy moves ``copy_mib`` MiB, far more than a processor cache holds, so
    it measures main memory. Single-threaded, float32, torch on the CPU; the
    thread setting is restored afterwards. The numbers depend on the machine
    and its load.
    """
    import torch

    n = require_positive_int(n, "n", maximum=16_384)
    copy_mib = require_positive_int(copy_mib, "copy_mib", maximum=4_096)
    repeats = require_positive_int(repeats, "repeats", maximum=1_000)

    def median_seconds(fn) -> float:
        fn()  # warm-up
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return float(statistics.median(times))

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.inference_mode():
            generator = torch.Generator().manual_seed(0)
            a = torch.randn(n, n, generator=generator)
            b = torch.randn(n, n, generator=generator)
            matmul = median_seconds(lambda: a @ b)
            src = torch.ones(copy_mib * 2**20 // 4)
            dst = torch.empty_like(src)
            copy = median_seconds(lambda: dst.copy_(src))
    finally:
        torch.set_num_threads(threads)
    return MachineBalance(2 * n**3 / matmul, 2 * src.numel() * 4 / copy)
