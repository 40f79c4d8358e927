"""Architecture hyper-parameters of real models, read from ``ffnbook/data/models.csv``.

The CSV is the project's vetted fact sheet (each row names its primary
sources). Some cells carry structure in words, for example ``"6 enc + 6 dec"``
or ``"61 (3 dense + 58 MoE)"``; :func:`load_models` parses them into
:class:`ModelConfig` fields so that pages compute with numbers, never with
strings, and a cell that no longer parses fails loudly. A fact about a model
lives here and nowhere else: code that needs a model's head size, its
latent-attention dimensions or its embedding layout reads the sheet.

Cell conventions: ``?`` marks a value the sources do not confirm, ``n/a`` one
that does not apply. The columns after ``attention_window``:

* ``architecture``: ``encoder``, ``decoder`` or ``encoder-decoder`` (the last
  must agree with an ``"N enc + M dec"`` layer count).
* ``d_head``: width of one attention head's queries and keys; ``?`` where the
  sources do not confirm it, ``n/a`` for latent attention, whose widths are in
  ``latent_attention``. The heads need not split ``d_model``: PaLM's 48 heads
  are 256 wide each (:attr:`ModelConfig.heads_split_d_model`).
* ``latent_attention``: DeepSeek's multi-head latent attention dimensions,
  named as in its configuration file (``q_lora_rank 1536; kv_lora_rank 512; ...``).
* ``tied_embeddings``: whether the output projection reuses the token-embedding
  matrix; ``position_table``: rows of a learned position-embedding table (0 for
  sinusoidal, relative or rotary positions); ``segment_types`` and ``pooler``:
  BERT's segment embeddings and pooler layer.
* ``ffn_width_rule``: the settings of LLaMA's FFN width rule
  (:func:`ffnbook.width.llama_ffn_width`) where the sources give them, marked
  ``P`` (primary file seen) or ``S`` (quoted by third parties only).

Two columns before them read in words too. ``attention_window`` is ``n/a``
(full attention), ``?`` (some layers banded, size not given: GPT-3), a
window ``W`` every layer keeps to (Mistral 7B), or ``W on K of N layers``
where only ``K`` layers keep to it and the others attend to the whole
context (gpt-oss alternates windowed and full layers; Llama 4 keeps three
layers in four to chunks of ``W`` positions, which no token's attention
crosses, so that ``W`` is as far as it reaches there too). ``n_layers``
is a count, ``"N enc + M dec"``, or ``"N (D dense + M MoE)"``.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import NamedTuple

import numpy as np

from ._checks import describe, lookup, require_bool, require_choice, require_nonnegative_int, require_positive_int
from .activations import LABELS
from .gated import VARIANT_NAMES

#: The sheet's FFN types, each with the activation it applies and whether it is
#: gated (GLU-style, three matrices, the activation on one projection gating another).
FFN_TYPES = {
    "relu": ("relu", False),
    "gelu": ("gelu", False),
    "gelu_tanh": ("gelu_tanh", False),
    "geglu": ("gelu", True),
    "swiglu": ("silu", True),
}

ARCHITECTURES = ("encoder", "decoder", "encoder-decoder")


def ffn_type_label(ffn_type: str) -> str:
    """How the book writes an FFN type: the activation's label, or the gated variant's name.

    The one place FFN types get names, built from :data:`ffnbook.activations.LABELS`
    and :data:`ffnbook.gated.VARIANT_NAMES`.

    >>> ffn_type_label("swiglu"), ffn_type_label("gelu_tanh")
    ('SwiGLU', 'GELU (tanh approx.)')
    """
    activation, gated = lookup(FFN_TYPES, ffn_type, "ffn_type")
    return VARIANT_NAMES[activation] if gated else LABELS[activation]


class WidthRule(NamedTuple):
    """The settings of LLaMA's FFN width rule for one model (:func:`ffnbook.width.llama_ffn_width`)."""

    multiple_of: int
    ffn_dim_multiplier: float | None
    mark: str  #: "P" (primary file seen) or "S" (quoted by third parties only)


class LatentAttention(NamedTuple):
    """Dimensions of multi-head latent attention (DeepSeek-V2/V3), named as in DeepSeek's config."""

    q_lora_rank: int  #: width of the compressed query
    kv_lora_rank: int  #: width of the latent shared by keys and values (what the KV cache stores)
    qk_nope_head_dim: int  #: per-head query/key width without position information
    qk_rope_head_dim: int  #: per-head rotary query/key width (the key's part bypasses the latent)
    v_head_dim: int  #: per-head value width


@dataclass(frozen=True)
class ModelConfig:
    """One row of models.csv, parsed."""

    name: str
    year: int
    source: str
    architecture: str  #: "decoder", "encoder" or "encoder-decoder"
    n_layers: int  #: all blocks (encoder + decoder for encoder-decoder models)
    n_encoder_layers: int
    n_decoder_layers: int
    n_moe_layers: int  #: blocks whose FFN is a mixture of experts
    d_model: int
    n_heads: int
    n_kv_heads: int
    attention: str  #: "mha", "gqa", "mqa" or "mla" (DeepSeek's multi-head latent attention)
    #: Query/key width of one head; ``None`` where the sources do not confirm it.
    #: For latent attention, ``qk_nope_head_dim + qk_rope_head_dim``.
    d_head: int | None
    d_ff: int  #: hidden width of one FFN; of one expert in MoE layers
    d_ff_dense: int  #: hidden width of the FFN in dense (non-MoE) layers
    ffn_type: str  #: "relu", "gelu", "gelu_tanh", "geglu" or "swiglu"
    ffn_bias: bool
    n_experts: int  #: routed experts per MoE layer (0 for dense models)
    n_shared_experts: int  #: always-active experts per MoE layer
    experts_per_token: int  #: routed experts each token uses (0 for dense models)
    vocab_size: int
    vocab_size_exact: bool  #: False where the source gives a rounded size ("~37000", "256k")
    total_params_reported: str  #: as the source states it, e.g. "175.0B" or "?"; see :func:`reported_size`
    tied_embeddings: bool  #: the output projection reuses the token-embedding matrix
    #: Rows of a learned position table; 0 where positions are not a learned table, ``None`` where not confirmed.
    position_table: int | None
    segment_types: int  #: rows of BERT's segment-embedding table (0 elsewhere)
    pooler: bool  #: BERT's ``d_model × d_model`` pooler layer with bias
    latent_attention: LatentAttention | None = None  #: multi-head latent attention dimensions, else ``None``
    ffn_width_rule: WidthRule | None = None  #: LLaMA's width-rule settings, where the sources give them
    #: Tokens per sequence in pre-training (the context the model was trained on),
    #: ``None`` where the vetted sources do not give it. For Mistral 7B it is the
    #: context length of v0.1's table, which the paper does not call the pre-training length.
    context_length: int | None = None
    #: Sliding-window span of every attention layer (Mistral 7B); ``None`` for full
    #: attention, or when a model restricts some layers to a band of unknown size
    #: (then ``attention_window_known`` is False: GPT-3's banded layers).
    attention_window: int | None = None
    attention_window_known: bool = True
    #: Layers that keep to ``attention_window`` (``None``: every layer, where there is a window);
    #: the others attend to the whole context. See :attr:`windowed_layers`.
    window_layers: int | None = None

    def __post_init__(self):
        _check_config(self)

    @property
    def activation(self) -> str:
        """The FFN's activation, a name of ``ffnbook.activations.ACTIVATIONS`` (SiLU for SwiGLU)."""
        return FFN_TYPES[self.ffn_type][0]

    @property
    def gated(self) -> bool:
        """Whether the FFN is GLU-style, with three matrices (gate, up and down)."""
        return FFN_TYPES[self.ffn_type][1]

    @property
    def ffn_type_label(self) -> str:
        """The FFN type as the book writes it (:func:`ffn_type_label`)."""
        return ffn_type_label(self.ffn_type)

    @property
    def n_dense_layers(self) -> int:
        return self.n_layers - self.n_moe_layers

    @property
    def is_moe(self) -> bool:
        return self.n_moe_layers > 0

    @property
    def d_head_v(self) -> int | None:
        """The value width of one head, ``v_head_dim`` for latent attention, else ``d_head``."""
        return self.latent_attention.v_head_dim if self.latent_attention else self.d_head

    @property
    def heads_split_d_model(self) -> bool:
        """Whether the query heads together are exactly ``d_model`` wide (``n_heads · d_head``).

        True for most of the sheet; False for PaLM (48 heads of 256 on a width of
        18,432) and for latent attention, whose query/key and value widths differ.
        """
        return self.latent_attention is None and self.d_head is not None and self.n_heads * self.d_head == self.d_model

    @property
    def windowed_layers(self) -> int:
        """How many layers keep their attention to ``attention_window`` positions (0 without a window)."""
        if self.attention_window is None:
            return 0
        return self.n_layers if self.window_layers is None else self.window_layers

    @property
    def window_on_every_layer(self) -> bool:
        """Whether every layer keeps to the window (Mistral 7B), so no attention reaches further."""
        return self.attention_window is not None and self.windowed_layers == self.n_layers

    @property
    def attention_span(self) -> int | None:
        """How many positions one token's attention can reach in its farthest-reaching layer.

        The window if every layer keeps to one, else the training context (a
        model whose other layers attend to the whole context reaches that far
        there); ``None`` if unknown."""
        if not self.attention_window_known:
            return None
        if self.window_on_every_layer:
            if self.context_length is not None:
                return min(self.attention_window, self.context_length)
            return self.attention_window
        return self.context_length

    @property
    def ffn_ratio(self) -> float:
        """Dense FFN width over model width, d_ff / d_model."""
        return self.d_ff_dense / self.d_model


#: The attention kinds of the sheet (multi-head, grouped-query, multi-query and multi-head latent).
ATTENTION_KINDS = ("mha", "gqa", "mqa", "mla")


def _check_config(m: ModelConfig) -> None:
    """Refuse a ModelConfig whose fields have the wrong type or contradict each other."""
    for field in ("name", "source", "total_params_reported"):
        value = getattr(m, field)
        if not isinstance(value, str):
            raise TypeError(f"{field} must be a str, got {describe(value)}")
        if not value.strip():
            raise ValueError(f"{field} must be a non-empty text (write '?' for an unknown size), got {value!r}")
    require_choice(m.architecture, "architecture", ARCHITECTURES)
    require_choice(m.attention, "attention", ATTENTION_KINDS)
    require_choice(m.ffn_type, "ffn_type", FFN_TYPES)
    for field in ("year", "n_layers", "d_model", "n_heads", "n_kv_heads", "d_ff", "d_ff_dense", "vocab_size"):
        require_positive_int(getattr(m, field), field)
    for field in ("n_encoder_layers", "n_decoder_layers", "n_moe_layers", "n_experts", "n_shared_experts",
                  "experts_per_token", "segment_types"):
        require_nonnegative_int(getattr(m, field), field)
    for field in ("d_head", "context_length", "attention_window"):
        if getattr(m, field) is not None:
            require_positive_int(getattr(m, field), field)
    if m.position_table is not None:
        require_nonnegative_int(m.position_table, "position_table")
    for field in ("ffn_bias", "vocab_size_exact", "tied_embeddings", "pooler", "attention_window_known"):
        require_bool(getattr(m, field), field)
    if m.latent_attention is not None and not isinstance(m.latent_attention, LatentAttention):
        raise TypeError(f"latent_attention must be a LatentAttention or None, got {describe(m.latent_attention)}")
    if m.ffn_width_rule is not None and not isinstance(m.ffn_width_rule, WidthRule):
        raise TypeError(f"ffn_width_rule must be a WidthRule or None, got {describe(m.ffn_width_rule)}")
    if m.n_encoder_layers + m.n_decoder_layers != m.n_layers:
        raise ValueError(f"n_encoder_layers + n_decoder_layers must equal n_layers={m.n_layers}, got "
                         f"{m.n_encoder_layers} + {m.n_decoder_layers}")
    if m.n_moe_layers > m.n_layers:
        raise ValueError(f"n_moe_layers must be at most n_layers={m.n_layers}, got {m.n_moe_layers}")
    if (m.n_moe_layers > 0) != (m.n_experts > 0) or (m.n_experts > 0) != (m.experts_per_token > 0):
        raise ValueError(f"n_moe_layers, n_experts and experts_per_token must be all zero (dense) or all "
                         f"positive (MoE), got {m.n_moe_layers}, {m.n_experts}, {m.experts_per_token}")
    if m.experts_per_token > m.n_experts:
        raise ValueError(f"experts_per_token must be at most n_experts={m.n_experts}, got {m.experts_per_token}")
    if (m.attention == "mla") != (m.latent_attention is not None):
        raise ValueError("latent_attention must be given exactly when attention is 'mla'")
    if m.attention != "mla" and m.n_heads % m.n_kv_heads:
        raise ValueError(f"n_kv_heads must divide n_heads={m.n_heads}, got {m.n_kv_heads}")
    if m.window_layers is not None:
        if m.attention_window is None:
            raise ValueError(f"window_layers must be None without an attention_window, got {m.window_layers}")
        require_positive_int(m.window_layers, "window_layers", maximum=m.n_layers)
    for field in dataclasses.fields(m):  # NumPy scalars become the builtins every other config holds
        value = getattr(m, field.name)
        if isinstance(value, (np.integer, np.bool_)):
            object.__setattr__(m, field.name, value.item())


#: The sheet's columns, in order; a sheet with any other header is refused.
COLUMNS = (
    "model", "year", "source", "n_layers", "d_model", "n_heads", "n_kv_heads", "d_ff", "ffn_type", "ffn_bias",
    "n_experts", "experts_per_token", "vocab_size", "total_params_reported", "context_length", "attention_window",
    "architecture", "d_head", "latent_attention", "tied_embeddings", "position_table", "segment_types", "pooler",
    "ffn_width_rule",
)

#: Where the sheet lives inside the package.
SHEET = "data/models.csv"


class SheetError(ValueError):
    """A malformed model sheet: the message names the file, the line, the model and the column."""


class _CellError(ValueError):
    """A cell that does not parse; :func:`parse_sheet` adds the file, line and model."""

    def __init__(self, column: str, message: str):
        super().__init__(f"{column} {message}")
        self.column, self.detail = column, message


def _match(pattern: str, cell: str, column: str, expected: str) -> re.Match:
    match = re.fullmatch(pattern, cell.strip())
    if not match:
        raise _CellError(column, f"must be {expected}, got {cell!r}")
    return match


def _int(cell: str, column: str, *, positive: bool = True, expected: str = "a whole number") -> int:
    value = int(_match(r"\d+", cell, column, expected).group(0))
    if positive and value == 0:
        raise _CellError(column, f"must be a positive whole number, got {cell!r}")
    return value


def _yes_no(cell: str, column: str) -> bool:
    if cell not in ("yes", "no"):
        raise _CellError(column, f"must be 'yes' or 'no', got {cell!r}")
    return cell == "yes"


def _latent_attention(cell: str) -> LatentAttention | None:
    if cell == "n/a":
        return None
    values = {}
    for part in cell.split(";"):
        match = re.fullmatch(r"\s*(\w+) (\d+)\s*", part)
        if not match or int(match.group(2)) == 0:
            raise _CellError("latent_attention", f"part {part!r} is not 'name positive-number'")
        values[match.group(1)] = int(match.group(2))
    if set(values) != set(LatentAttention._fields):
        raise _CellError("latent_attention", f"must give {', '.join(LatentAttention._fields)}, "
                                             f"got {', '.join(values)}")
    return LatentAttention(**values)


def _width_rule(cell: str) -> WidthRule | None:
    if cell == "n/a":
        return None
    match = _match(r"([PS]): multiple_of ([1-9]\d*)(?:, ffn_dim_multiplier (\d+(?:\.\d+)?))?", cell,
                   "ffn_width_rule", "'P|S: multiple_of N[, ffn_dim_multiplier X]' or 'n/a'")
    multiplier = float(match.group(3)) if match.group(3) else None
    if multiplier == 0:
        raise _CellError("ffn_width_rule", f"ffn_dim_multiplier must be positive, got {cell!r}")
    return WidthRule(int(match.group(2)), multiplier, match.group(1))


def _parse_row(row: dict) -> ModelConfig:
    name = row["model"]
    if not name.strip() or name != name.strip():
        raise _CellError("model", f"must be a name without surrounding spaces, got {name!r}")
    layers = row["n_layers"].strip()
    architecture = row["architecture"]
    if architecture not in ARCHITECTURES:
        raise _CellError("architecture", f"must be one of {', '.join(ARCHITECTURES)}, got {architecture!r}")
    enc_dec = re.fullmatch(r"(\d+) enc \+ (\d+) dec", layers)
    moe_split = re.fullmatch(r"(\d+) \((\d+) dense \+ (\d+) MoE\)", layers)
    if bool(enc_dec) != (architecture == "encoder-decoder"):
        raise _CellError("n_layers", f"reads {layers!r} but the model is {architecture!r}; encoder-decoder "
                                     "models, and only they, count 'N enc + M dec'")
    n_experts_cell = row["n_experts"].strip()
    dense = n_experts_cell == "n/a"
    if enc_dec:
        n_enc, n_dec = int(enc_dec.group(1)), int(enc_dec.group(2))
        n_layers = n_enc + n_dec
    else:
        n_layers = int(moe_split.group(1)) if moe_split else _int(layers, "n_layers")
        n_enc, n_dec = (n_layers, 0) if architecture == "encoder" else (0, n_layers)
    if moe_split:
        n_moe_layers = int(moe_split.group(3))
        if int(moe_split.group(2)) + n_moe_layers != n_layers:
            raise _CellError("n_layers", f"layer split does not add up: {layers!r}")
    else:
        n_moe_layers = 0 if dense else n_layers

    n_heads = _int(row["n_heads"], "n_heads")
    kv = _match(r"(\d+)( \(MLA\))?", row["n_kv_heads"], "n_kv_heads", "a whole number, or 'N (MLA)'")
    latent = _latent_attention(row["latent_attention"])
    n_kv_heads = _int(kv.group(1), "n_kv_heads")
    if kv.group(2):
        attention = "mla"
    else:
        attention = "mha" if n_kv_heads == n_heads else ("mqa" if n_kv_heads == 1 else "gqa")
    if (attention == "mla") != (latent is not None):
        raise _CellError("latent_attention", "dimensions are needed exactly when n_kv_heads says MLA")
    head_cell = row["d_head"].strip()
    if latent is not None:
        if head_cell != "n/a":
            raise _CellError("d_head", f"must be 'n/a' for latent attention, got {head_cell!r}")
        d_head = latent.qk_nope_head_dim + latent.qk_rope_head_dim
    else:
        d_head = None if head_cell == "?" else _int(head_cell, "d_head")

    widths = _match(r"(\d+)(?: per expert \(dense FFN[^:()]*: (\d+)\))?", row["d_ff"], "d_ff",
                    "a whole number, or 'N per expert (dense FFN ...: M)'")
    d_ff = _int(widths.group(1), "d_ff")
    d_ff_dense = _int(widths.group(2), "d_ff") if widths.group(2) else d_ff

    ffn_type = row["ffn_type"].strip()
    ffn_type = {"gelu (tanh approx.)": "gelu_tanh"}.get(ffn_type, ffn_type)
    if ffn_type not in FFN_TYPES:
        raise _CellError("ffn_type", f"must be one of {', '.join(FFN_TYPES)} or 'gelu (tanh approx.)', "
                                     f"got {row['ffn_type']!r}")

    per_token_cell = row["experts_per_token"].strip()
    if dense:
        if per_token_cell != "n/a":
            raise _CellError("experts_per_token", f"must be 'n/a' for a dense model, got {per_token_cell!r}")
        n_experts = n_shared = per_token = 0
    else:
        experts = _match(r"(\d+)(?: routed)?(?: \+ (\d+) shared(?: per MoE layer)?)?", n_experts_cell,
                         "n_experts", "'n/a', a whole number, or 'N routed + M shared per MoE layer'")
        n_experts = _int(experts.group(1), "n_experts")
        n_shared = _int(experts.group(2), "n_experts") if experts.group(2) else 0
        chosen = _match(r"(\d+)(?: routed)?(?: \+ (\d+) shared)?", per_token_cell, "experts_per_token",
                        "a whole number, or 'N routed + M shared'")
        per_token = _int(chosen.group(1), "experts_per_token")
        if chosen.group(2) and int(chosen.group(2)) != n_shared:
            raise _CellError("experts_per_token", f"names {chosen.group(2)} shared experts but n_experts "
                                                  f"names {n_shared}")
        if per_token > n_experts:
            raise _CellError("experts_per_token", f"{per_token} is more than the {n_experts} routed experts")

    vocab_cell = row["vocab_size"].strip()
    if re.fullmatch(r"\d+", vocab_cell):
        vocab, exact = _int(vocab_cell, "vocab_size"), True
    elif re.fullmatch(r"~\d+", vocab_cell):
        vocab, exact = _int(vocab_cell[1:], "vocab_size"), False
    elif re.fullmatch(r"\d+k", vocab_cell):
        vocab, exact = _int(vocab_cell[:-1], "vocab_size") * 1000, False
    else:
        raise _CellError("vocab_size", f"must be a whole number, '~N' or 'Nk', got {vocab_cell!r}")

    context_cell = row["context_length"].strip()
    context_length = None if context_cell == "?" else _int(context_cell, "context_length")
    window_cell = row["attention_window"].strip()
    window_known = window_cell != "?"
    window_layers = None
    some_layers = re.fullmatch(r"(\d+) on (\d+) of (\d+) layers", window_cell)
    if some_layers:
        window = _int(some_layers.group(1), "attention_window")
        window_layers = _int(some_layers.group(2), "attention_window")
        if int(some_layers.group(3)) != n_layers or window_layers > n_layers:
            raise _CellError("attention_window", f"{window_cell!r} must name K of the model's {n_layers} "
                                                 "layers, K at most that")
    else:
        window = None if window_cell in ("n/a", "?") else _int(
            window_cell, "attention_window", expected="a whole number, 'W on K of N layers', 'n/a' or '?'")
    table_cell = row["position_table"].strip()
    position_table = None if table_cell == "?" else _int(table_cell, "position_table", positive=False)
    reported = row["total_params_reported"]
    if not reported.strip():
        raise _CellError("total_params_reported", "is empty; write '?' where the source gives no size")

    return ModelConfig(
        name=name,
        year=_int(row["year"], "year"),
        source=row["source"],
        architecture=architecture,
        n_layers=n_layers,
        n_encoder_layers=n_enc,
        n_decoder_layers=n_dec,
        n_moe_layers=n_moe_layers,
        d_model=_int(row["d_model"], "d_model"),
        n_heads=n_heads,
        n_kv_heads=n_kv_heads,
        attention=attention,
        d_head=d_head,
        d_ff=d_ff,
        d_ff_dense=d_ff_dense,
        ffn_type=ffn_type,
        ffn_bias=_yes_no(row["ffn_bias"], "ffn_bias"),
        n_experts=n_experts,
        n_shared_experts=n_shared,
        experts_per_token=per_token,
        vocab_size=vocab,
        vocab_size_exact=exact,
        total_params_reported=reported,
        tied_embeddings=_yes_no(row["tied_embeddings"], "tied_embeddings"),
        position_table=position_table,
        segment_types=_int(row["segment_types"], "segment_types", positive=False),
        pooler=_yes_no(row["pooler"], "pooler"),
        latent_attention=latent,
        ffn_width_rule=_width_rule(row["ffn_width_rule"]),
        context_length=context_length,
        attention_window=window,
        attention_window_known=window_known,
        window_layers=window_layers,
    )


def parse_sheet(data: bytes | str, source: str = "models.csv") -> tuple[ModelConfig, ...]:
    """Every model of a sheet in the format of ``ffnbook/data/models.csv``, validated as a whole.

    ``data`` is the file's bytes (or text). Refused, with a :class:`SheetError`
    that names ``source``, the line, the model and the column: bytes that are
    not UTF-8 or that start with a byte-order mark, a header that differs
    from :data:`COLUMNS`, an empty sheet, a row with too few or too many
    cells, an empty row, two rows for one model, and any cell that does not
    parse (a number with trailing text such as ``"3072abc"`` included).

    >>> parse_sheet(b"")
    Traceback (most recent call last):
    ...
    ffnbook.models.SheetError: models.csv is empty: it needs a header line and one row per model
    """
    if not isinstance(data, (bytes, str)):
        raise TypeError(f"data must be the sheet's bytes or text, got {describe(data)}")
    if isinstance(data, bytes):
        if data.startswith(b"\xef\xbb\xbf"):
            raise SheetError(f"{source} starts with a UTF-8 byte-order mark; save it as UTF-8 without one")
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as error:
            line = data[: error.start].count(b"\n") + 1
            raise SheetError(f"{source}, line {line}: not UTF-8 ({error.reason} at byte {error.start})") from None
    if data.startswith("\ufeff"):
        raise SheetError(f"{source} starts with a byte-order mark; save it as UTF-8 without one")
    if not data.strip():
        raise SheetError(f"{source} is empty: it needs a header line and one row per model")
    reader = csv.reader(io.StringIO(data, newline=""), strict=True)
    try:
        header = next(reader)
        if tuple(header) != COLUMNS:
            missing = [c for c in COLUMNS if c not in header]
            extra = [c for c in header if c not in COLUMNS]
            doubled = sorted({c for c in header if header.count(c) > 1})
            problems = ([f"missing {', '.join(missing)}"] if missing else []) + \
                       ([f"unknown {', '.join(map(repr, extra))}"] if extra else []) + \
                       ([f"repeated {', '.join(doubled)}"] if doubled else [])
            raise SheetError(f"{source}, line 1: the header must be the columns {', '.join(COLUMNS)}; "
                             + ("; ".join(problems) if problems else "they are out of order"))
        models, seen = [], {}
        line = reader.line_num + 1
        for cells in reader:
            where = f"{source}, line {line}"
            if not cells or not any(c.strip() for c in cells):
                raise SheetError(f"{where}: an empty row")
            if len(cells) != len(COLUMNS):
                raise SheetError(f"{where} ({cells[0]!r}): {len(cells)} cells, the header has {len(COLUMNS)}")
            row = dict(zip(COLUMNS, cells))
            try:
                model = _parse_row(row)
            except _CellError as error:
                raise SheetError(f"{where} (model {row['model']!r}), column {error.column}: {error.detail}") from None
            except (TypeError, ValueError) as error:  # the parsed row contradicts itself (ModelConfig)
                raise SheetError(f"{where} (model {row['model']!r}): {error}") from None
            if model.name in seen:
                raise SheetError(f"{where}: model {model.name!r} is already on line {seen[model.name]}")
            seen[model.name] = line
            models.append(model)
            line = reader.line_num + 1
    except csv.Error as error:
        raise SheetError(f"{source}, line {reader.line_num}: malformed CSV: {error}") from None
    if not models:
        raise SheetError(f"{source} holds a header but no model")
    return tuple(models)


@lru_cache(maxsize=1)
def load_models() -> tuple[ModelConfig, ...]:
    """Every model of the fact sheet, in the sheet's order (read on first use, then cached).

    A malformed sheet raises :class:`SheetError` here, when a model is first
    needed, never when a module is imported.

    >>> models = load_models()
    >>> get_model("LLaMA-1 7B").d_ff, get_model("LLaMA-1 7B").ffn_type
    (11008, 'swiglu')
    >>> get_model("T5-base v1.0").architecture
    'encoder-decoder'
    """
    return parse_sheet(resources.files("ffnbook").joinpath(SHEET).read_bytes(), f"ffnbook/{SHEET}")


def check_model(model, name: str = "model") -> ModelConfig:
    """``model`` if it is a :class:`ModelConfig`, else a TypeError naming ``name`` and how to get one.

    >>> check_model("GPT-2 small")
    Traceback (most recent call last):
    ...
    TypeError: model must be an ffnbook.models.ModelConfig (e.g. get_model('GPT-2 small')), got str 'GPT-2 small'
    """
    if not isinstance(model, ModelConfig):
        raise TypeError(f"{name} must be an ffnbook.models.ModelConfig (e.g. get_model('GPT-2 small')), "
                        f"got {describe(model)}")
    return model


def resolve_model(model, name: str = "model") -> ModelConfig:
    """``model`` as a :class:`ModelConfig`: one already, or the name of a model of the sheet.

    Errors name the argument ``name``:

    >>> resolve_model("GPT-5", "names[0]")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: names[0] must be a model of models.csv, got 'GPT-5'; known models: Transformer base ...
    """
    if isinstance(model, ModelConfig):
        return model
    if not isinstance(model, str):
        raise TypeError(f"{name} must be a model name or an ffnbook.models.ModelConfig, got {describe(model)}")
    for m in load_models():
        if m.name == model:
            return m
    names = ", ".join(m.name for m in load_models())
    raise ValueError(f"{name} must be a model of models.csv, got {model!r}; known models: {names}")


def get_model(name: str) -> ModelConfig:
    """The model called ``name`` (exactly as in the sheet's ``model`` column).

    >>> get_model("GPT-2")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: name must be a model of models.csv, got 'GPT-2'; known models: Transformer base ...
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a model name (str), got {describe(name)}")
    return resolve_model(name, "name")


def reported_size(model: ModelConfig, which: str = "total") -> float:
    """The size the model's authors report, in parameters, parsed from the sheet.

    The one reader of the ``total_params_reported`` cell, which reads like
    ``"175.0B"``, ``"47B total; 13B active"`` or ``"117M (paper); 124M
    (corrected, ...)"``. ``which`` is ``"total"`` or ``"active"`` (mixtures of
    experts only). Where the sheet gives a corrected figure (GPT-2, after
    OpenAI's README) that one is used. A cell without the size asked for
    raises, so a changed sheet fails loudly instead of showing a wrong number.

    >>> reported_size(get_model("GPT-3 175B"))
    175000000000.0
    >>> reported_size(get_model("Mixtral 8x7B"), "active")
    13000000000.0
    """
    model = check_model(model)
    require_choice(which, "which", ("total", "active"))
    parts = {}
    for part in model.total_params_reported.split(";"):
        match = re.search(r"(\d+(?:\.\d+)?)([MB])", part)
        if match:
            value = float(match.group(1)) * {"M": 1e6, "B": 1e9}[match.group(2)]
            key = "active" if "active" in part else "total"
            if key not in parts or "corrected" in part:
                parts[key] = value
    if which not in parts:
        raise ValueError(
            f"the sheet gives no reported {which} size for {model.name}: {model.total_params_reported!r}"
        )
    return parts[which]


# --- which models use which FFN --------------------------------------------------------------


def models_by_ffn_type() -> dict[str, list[str]]:
    """Model names grouped by their FFN type, in the sheet's order.

    >>> "T5-base v1.0" in models_by_ffn_type()["relu"]
    True
    """
    groups: dict[str, list[str]] = {}
    for model in load_models():
        groups.setdefault(model.ffn_type, []).append(model.name)
    return groups


def ffn_type_table():
    """:func:`models_by_ffn_type` as a two-column table for a page; gated types name their activation."""
    from .display import MarkdownTable

    def label(ffn_type):
        activation, gated = FFN_TYPES[ffn_type]
        return ffn_type_label(ffn_type) + (f" (gated, {LABELS[activation]})" if gated else "")

    rows = [{"type": label(t), "models": ", ".join(names)} for t, names in models_by_ffn_type().items()]
    return MarkdownTable(rows, [("FFN activation", "type", "s"), ("models in the sheet", "models", "s")])
