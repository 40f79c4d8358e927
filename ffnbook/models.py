"""Architecture hyper-parameters of real models, read from ``ffnbook/data/models.csv``.

The CSV is the project's vetted fact sheet (each row names its primary
sources). Some cells carry structure in words, for example ``"6 enc + 6 dec"``
or ``"61 (3 dense + 58 MoE)"``; :func:`load_models` parses them into
:class:`ModelConfig` fields so that pages compute with numbers, never with
strings, and a cell that no longer parses fails loudly.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

#: Models whose stack is encoder-only; the CSV marks encoder-decoder models in
#: n_layers ("12 enc + 12 dec") and every other model is decoder-only.
_ENCODER_ONLY = ("BERT-base", "BERT-large")


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
    d_ff: int  #: hidden width of one FFN; of one expert in MoE layers
    d_ff_dense: int  #: hidden width of the FFN in dense (non-MoE) layers
    ffn_type: str  #: "relu", "gelu", "gelu_tanh", "geglu" or "swiglu"
    ffn_bias: bool
    n_experts: int  #: routed experts per MoE layer (0 for dense models)
    n_shared_experts: int  #: always-active experts per MoE layer
    experts_per_token: int  #: routed experts each token uses (0 for dense models)
    vocab_size: int
    vocab_size_exact: bool  #: False where the source gives a rounded size ("~37000", "256k")
    total_params_reported: str  #: as the source states it, e.g. "175.0B" or "?"
    #: Tokens per sequence in pre-training (the context the model was trained on),
    #: ``None`` where the vetted sources do not give it.
    context_length: int | None = None
    #: Sliding-window span of every attention layer (Mistral 7B); ``None`` for full
    #: attention, or when a model restricts some layers to a band of unknown size
    #: (then ``attention_window_known`` is False: GPT-3's banded layers).
    attention_window: int | None = None
    attention_window_known: bool = True

    @property
    def gated(self) -> bool:
        """Whether the FFN is GLU-style, with three matrices (gate, up and down)."""
        return self.ffn_type.endswith("glu")

    @property
    def n_dense_layers(self) -> int:
        return self.n_layers - self.n_moe_layers

    @property
    def is_moe(self) -> bool:
        return self.n_moe_layers > 0

    @property
    def d_head(self) -> int:
        """d_model / n_heads. Not PaLM's real head size, which the sheet does not confirm."""
        return self.d_model // self.n_heads

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


def _parse_row(row: dict) -> ModelConfig:
    name = row["model"]
    layers = row["n_layers"]
    enc_dec = re.fullmatch(r"(\d+) enc \+ (\d+) dec", layers)
    moe_split = re.fullmatch(r"(\d+) \((\d+) dense \+ (\d+) MoE\)", layers)
    n_experts_cell = row["n_experts"]
    dense = n_experts_cell == "n/a"

    if enc_dec:
        n_enc, n_dec = int(enc_dec.group(1)), int(enc_dec.group(2))
        n_layers, architecture = n_enc + n_dec, "encoder-decoder"
    else:
        n_layers = int(moe_split.group(1)) if moe_split else _int(layers, f"{name} n_layers")
        architecture = "encoder" if name in _ENCODER_ONLY else "decoder"
        n_enc, n_dec = (n_layers, 0) if architecture == "encoder" else (0, n_layers)
    if moe_split:
        n_moe_layers = int(moe_split.group(3))
        if int(moe_split.group(2)) + n_moe_layers != n_layers:
            raise ValueError(f"models.csv: {name} layer split does not add up: {layers!r}")
    else:
        n_moe_layers = 0 if dense else n_layers

    n_heads = _int(row["n_heads"], f"{name} n_heads")
    kv_cell = row["n_kv_heads"]
    if "MLA" in kv_cell:
        n_kv_heads, attention = _leading_int(kv_cell, f"{name} n_kv_heads"), "mla"
    else:
        n_kv_heads = _int(kv_cell, f"{name} n_kv_heads")
        attention = "mha" if n_kv_heads == n_heads else ("mqa" if n_kv_heads == 1 else "gqa")

    d_ff = _leading_int(row["d_ff"], f"{name} d_ff")
    dense_width = re.search(r"dense FFN[^:]*:\s*(\d+)", row["d_ff"])
    d_ff_dense = int(dense_width.group(1)) if dense_width else d_ff

    ffn_type = row["ffn_type"].strip()
    ffn_type = {"gelu (tanh approx.)": "gelu_tanh"}.get(ffn_type, ffn_type)
    if ffn_type not in ("relu", "gelu", "gelu_tanh", "geglu", "swiglu"):
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

    context_cell = row.get("context_length", "?").strip()
    context_length = None if context_cell == "?" else _int(context_cell, f"{name} context_length")
    window_cell = row.get("attention_window", "n/a").strip()
    window_known = window_cell != "?"
    window = None if window_cell in ("n/a", "?") else _int(window_cell, f"{name} attention_window")

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
        d_ff=d_ff,
        d_ff_dense=d_ff_dense,
        ffn_type=ffn_type,
        ffn_bias={"yes": True, "no": False}[row["ffn_bias"]],
        n_experts=n_experts,
        n_shared_experts=n_shared,
        experts_per_token=per_token,
        vocab_size=vocab,
        vocab_size_exact=exact,
        total_params_reported=row["total_params_reported"],
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
