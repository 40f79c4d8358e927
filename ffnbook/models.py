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
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import NamedTuple

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
    if ffn_type not in FFN_TYPES:
        raise ValueError(f"unknown FFN type {ffn_type!r}; expected one of: {', '.join(FFN_TYPES)}")
    activation, gated = FFN_TYPES[ffn_type]
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
    def attention_span(self) -> int | None:
        """How many positions one token's attention can reach in a layer.

        The sliding window if there is one, else the training context; ``None``
        if unknown."""
        if not self.attention_window_known:
            return None
        if self.attention_window is not None and self.context_length is not None:
            return min(self.attention_window, self.context_length)
        return self.attention_window or self.context_length

    @property
    def ffn_ratio(self) -> float:
        """Dense FFN width over model width, d_ff / d_model."""
        return self.d_ff_dense / self.d_model


def _int(cell: str, what: str) -> int:
    cell = cell.strip()
    if not re.fullmatch(r"\d+", cell):
        raise ValueError(f"models.csv: {what} must be a whole number, got {cell!r}")
    return int(cell)


def _leading_int(cell: str, what: str) -> int:
    match = re.match(r"\s*(\d+)", cell)
    if not match:
        raise ValueError(f"models.csv: {what} must start with a number, got {cell!r}")
    return int(match.group(1))


def _yes_no(cell: str, what: str) -> bool:
    if cell not in ("yes", "no"):
        raise ValueError(f"models.csv: {what} must be 'yes' or 'no', got {cell!r}")
    return cell == "yes"


def _latent_attention(cell: str, name: str) -> LatentAttention | None:
    if cell == "n/a":
        return None
    values = {}
    for part in cell.split(";"):
        match = re.fullmatch(r"\s*(\w+) (\d+)\s*", part)
        if not match:
            raise ValueError(f"models.csv: {name} latent_attention part {part!r} is not 'name number'")
        values[match.group(1)] = int(match.group(2))
    if set(values) != set(LatentAttention._fields):
        raise ValueError(f"models.csv: {name} latent_attention must give {', '.join(LatentAttention._fields)}, "
                         f"got {', '.join(values)}")
    return LatentAttention(**values)


def _width_rule(cell: str, name: str) -> WidthRule | None:
    if cell == "n/a":
        return None
    match = re.fullmatch(r"([PS]): multiple_of (\d+)(?:, ffn_dim_multiplier (\d+(?:\.\d+)?))?", cell)
    if not match:
        raise ValueError(f"models.csv: {name} ffn_width_rule {cell!r} is not "
                         "'P|S: multiple_of N[, ffn_dim_multiplier X]'")
    multiplier = float(match.group(3)) if match.group(3) else None
    return WidthRule(int(match.group(2)), multiplier, match.group(1))


def _parse_row(row: dict) -> ModelConfig:
    name = row["model"]
    layers = row["n_layers"]
    enc_dec = re.fullmatch(r"(\d+) enc \+ (\d+) dec", layers)
    moe_split = re.fullmatch(r"(\d+) \((\d+) dense \+ (\d+) MoE\)", layers)
    n_experts_cell = row["n_experts"]
    dense = n_experts_cell == "n/a"

    architecture = row["architecture"]
    if architecture not in ARCHITECTURES:
        raise ValueError(f"models.csv: {name} architecture must be one of {ARCHITECTURES}, got {architecture!r}")
    if bool(enc_dec) != (architecture == "encoder-decoder"):
        raise ValueError(f"models.csv: {name} is {architecture!r} but n_layers reads {layers!r}; "
                         "encoder-decoder models, and only they, count 'N enc + M dec'")
    if enc_dec:
        n_enc, n_dec = int(enc_dec.group(1)), int(enc_dec.group(2))
        n_layers = n_enc + n_dec
    else:
        n_layers = int(moe_split.group(1)) if moe_split else _int(layers, f"{name} n_layers")
        n_enc, n_dec = (n_layers, 0) if architecture == "encoder" else (0, n_layers)
    if moe_split:
        n_moe_layers = int(moe_split.group(3))
        if int(moe_split.group(2)) + n_moe_layers != n_layers:
            raise ValueError(f"models.csv: {name} layer split does not add up: {layers!r}")
    else:
        n_moe_layers = 0 if dense else n_layers

    n_heads = _int(row["n_heads"], f"{name} n_heads")
    kv_cell = row["n_kv_heads"]
    latent = _latent_attention(row["latent_attention"], name)
    if "MLA" in kv_cell:
        n_kv_heads, attention = _leading_int(kv_cell, f"{name} n_kv_heads"), "mla"
    else:
        n_kv_heads = _int(kv_cell, f"{name} n_kv_heads")
        attention = "mha" if n_kv_heads == n_heads else ("mqa" if n_kv_heads == 1 else "gqa")
    if (attention == "mla") != (latent is not None):
        raise ValueError(f"models.csv: {name} needs latent_attention dimensions exactly when n_kv_heads says MLA")
    head_cell = row["d_head"]
    if latent is not None:
        if head_cell != "n/a":
            raise ValueError(f"models.csv: {name} uses latent attention; its d_head must be 'n/a', got {head_cell!r}")
        d_head = latent.qk_nope_head_dim + latent.qk_rope_head_dim
    else:
        d_head = None if head_cell == "?" else _int(head_cell, f"{name} d_head")

    d_ff = _leading_int(row["d_ff"], f"{name} d_ff")
    dense_width = re.search(r"dense FFN[^:]*:\s*(\d+)", row["d_ff"])
    d_ff_dense = int(dense_width.group(1)) if dense_width else d_ff

    ffn_type = row["ffn_type"].strip()
    ffn_type = {"gelu (tanh approx.)": "gelu_tanh"}.get(ffn_type, ffn_type)
    if ffn_type not in FFN_TYPES:
        raise ValueError(f"models.csv: {name} has unknown ffn_type {row['ffn_type']!r}")

    if dense:
        n_experts = n_shared = per_token = 0
    else:
        n_experts = _leading_int(n_experts_cell, f"{name} n_experts")
        shared = re.search(r"\+ (\d+) shared", n_experts_cell)
        n_shared = int(shared.group(1)) if shared else 0
        per_token = _leading_int(row["experts_per_token"], f"{name} experts_per_token")

    vocab_cell = row["vocab_size"].strip()
    if re.fullmatch(r"\d+", vocab_cell):
        vocab, exact = int(vocab_cell), True
    elif re.fullmatch(r"~\d+", vocab_cell):
        vocab, exact = int(vocab_cell[1:]), False
    elif re.fullmatch(r"\d+k", vocab_cell):
        vocab, exact = int(vocab_cell[:-1]) * 1000, False
    else:
        raise ValueError(f"models.csv: {name} vocab_size {vocab_cell!r} is not understood")

    context_cell = row["context_length"].strip()
    context_length = None if context_cell == "?" else _int(context_cell, f"{name} context_length")
    window_cell = row["attention_window"].strip()
    window_known = window_cell != "?"
    window = None if window_cell in ("n/a", "?") else _int(window_cell, f"{name} attention_window")
    table_cell = row["position_table"].strip()
    position_table = None if table_cell == "?" else _int(table_cell, f"{name} position_table")

    return ModelConfig(
        name=name,
        year=_int(row["year"], f"{name} year"),
        source=row["source"],
        architecture=architecture,
        n_layers=n_layers,
        n_encoder_layers=n_enc,
        n_decoder_layers=n_dec,
        n_moe_layers=n_moe_layers,
        d_model=_int(row["d_model"], f"{name} d_model"),
        n_heads=n_heads,
        n_kv_heads=n_kv_heads,
        attention=attention,
        d_head=d_head,
        d_ff=d_ff,
        d_ff_dense=d_ff_dense,
        ffn_type=ffn_type,
        ffn_bias=_yes_no(row["ffn_bias"], f"{name} ffn_bias"),
        n_experts=n_experts,
        n_shared_experts=n_shared,
        experts_per_token=per_token,
        vocab_size=vocab,
        vocab_size_exact=exact,
        total_params_reported=row["total_params_reported"],
        tied_embeddings=_yes_no(row["tied_embeddings"], f"{name} tied_embeddings"),
        position_table=position_table,
        segment_types=_int(row["segment_types"], f"{name} segment_types"),
        pooler=_yes_no(row["pooler"], f"{name} pooler"),
        latent_attention=latent,
        ffn_width_rule=_width_rule(row["ffn_width_rule"], name),
        context_length=context_length,
        attention_window=window,
        attention_window_known=window_known,
    )


@lru_cache(maxsize=1)
def load_models() -> tuple[ModelConfig, ...]:
    """Every model of the fact sheet, in the sheet's order.

    >>> models = load_models()
    >>> get_model("LLaMA-1 7B").d_ff, get_model("LLaMA-1 7B").ffn_type
    (11008, 'swiglu')
    >>> get_model("T5-base v1.0").architecture
    'encoder-decoder'
    """
    text = resources.files("ffnbook").joinpath("data/models.csv").read_text(encoding="utf-8")
    return tuple(_parse_row(row) for row in csv.DictReader(text.splitlines()))


def get_model(name: str) -> ModelConfig:
    """The model called ``name`` (exactly as in the sheet's ``model`` column)."""
    for model in load_models():
        if model.name == name:
            return model
    names = ", ".join(m.name for m in load_models())
    raise KeyError(f"no model {name!r} in models.csv; known models: {names}")


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
    if not isinstance(model, ModelConfig):
        raise TypeError(f"expected an ffnbook.models.ModelConfig, got {type(model).__name__}")
    if which not in ("total", "active"):
        raise ValueError(f"which must be 'total' or 'active', got {which!r}")
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
