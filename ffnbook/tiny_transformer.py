"""A tiny decoder-only transformer built from the chapter's own block, and its training.

Each block is the pre-norm block of :func:`ffnbook.block.transformer_block`,
in PyTorch::

    h = x + Attention(LN(x))
    y = h + FFN(LN(h))

with the attention of :func:`ffnbook.attention.self_attention` (query, key,
value and output projections without biases, ``n_heads`` heads) plus a
causal mask, the FFN of :class:`ffnbook.torch_ffn.PositionwiseFFN` (ReLU),
and layer norms without learned gain or bias, exactly as the NumPy block
computes them. So a block's weights export to
:class:`~ffnbook.attention.AttentionParams` and
:class:`~ffnbook.feedforward.FFNParams` and give the same numbers there.

Around the blocks: a token embedding plus a learned position embedding, a
final layer norm and an unembedding matrix that maps each position's vector
to one score (logit) per token of the vocabulary.

:func:`train_on_facts` trains it to answer the prompts of
:mod:`ffnbook.facts`, with a cross-entropy loss on the answer position only.
Training is deterministic: seeded, with deterministic algorithms demanded
(``torch.set_deterministic_debug_mode("error")``) and a fixed number of
threads, so the same call gives bit-identical weights on the same machine.

This module imports torch.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
import torch
from torch import nn

from ._checks import (
    as_float_array,
    describe,
    require_bool,
    require_index,
    require_instance,
    require_number,
    require_positive_int,
    require_seed,
    require_sequence,
    require_tensor_size,
)
from .attention import AttentionParams, check_attention_params
from .block import LN_EPS, transformer_block
from .facts import FactWorld, Prompts, _draw_prompts, check_facts, check_world, make_prompts, repeat_facts
from .feedforward import FFNParams, ffn_params_of
from .torch_ffn import PositionwiseFFN, linear_weights, load_linear, torch_dtype


def layer_norm(x: torch.Tensor) -> torch.Tensor:
    """Layer norm over the last axis without gain or bias (as :func:`ffnbook.block.layer_norm`)."""
    _check_float_tensor(x, "x")
    return nn.functional.layer_norm(x, x.shape[-1:], eps=LN_EPS)


def _check_float_tensor(x, name: str, d_model: int | None = None) -> torch.Tensor:
    """``x`` if it is a floating-point torch tensor with at least one axis (of width ``d_model`` if given)."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch tensor, got {describe(x)}")
    if not x.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got dtype {x.dtype}")
    if x.dim() == 0 or (d_model is not None and x.shape[-1] != d_model):
        raise ValueError(f"{name} must have shape (..., {d_model or 'd_model'}), got {tuple(x.shape)}")
    return x


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention as in :func:`ffnbook.attention.self_attention`, with a causal mask.

    With ``causal=True`` position ``t`` attends to positions ``0..t`` only,
    as in a decoder; with ``causal=False`` it equals the NumPy function.
    """

    def __init__(self, d_model: int, n_heads: int, *, causal: bool = True):
        super().__init__()
        self.d_model = require_positive_int(d_model, "d_model")
        self.n_heads = require_positive_int(n_heads, "n_heads")
        require_tensor_size({"d_model": self.d_model}, ("d_model", "d_model"))
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}")
        self.causal = require_bool(causal, "causal")
        self.q, self.k, self.v, self.o = (nn.Linear(d_model, d_model, bias=False) for _ in range(4))

    def forward(self, x: torch.Tensor, *, return_weights: bool = False, last_only: bool = False):
        """Attention output, shape of ``x``; with ``return_weights``, also the weights ``(..., H, T, T)``.

        ``last_only=True`` computes the output of the last position only,
        ``(..., 1, d_model)`` (weights ``(..., H, 1, T)``): its query against
        every position's key and value.
        """
        _check_float_tensor(x, "x", self.d_model)
        return_weights, last_only = require_bool(return_weights, "return_weights"), require_bool(last_only, "last_only")
        if x.dim() < 2:
            raise ValueError(f"x must have shape (..., seq_len, {self.d_model}), got {tuple(x.shape)}")
        T, d_head = x.shape[-2], self.d_model // self.n_heads

        def split(t):  # (..., T, D) -> (..., H, T, d_head)
            return t.reshape(*t.shape[:-1], self.n_heads, d_head).transpose(-2, -3)

        queries = x[..., -1:, :] if last_only else x
        q, k, v = split(self.q(queries)), split(self.k(x)), split(self.v(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(d_head)
        if self.causal:  # the query at position T - n + i sees the keys up to there
            n = queries.shape[-2]
            future = torch.ones(n, T, dtype=torch.bool, device=x.device).triu(1 + T - n)
            scores = scores.masked_fill(future, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        merged = (weights @ v).transpose(-2, -3).reshape(queries.shape)
        out = self.o(merged)
        return (out, weights) if return_weights else out

    def to_numpy(self) -> AttentionParams:
        """The projections in the NumPy convention (``x @ Wq``), i.e. the transposed torch weights."""
        return AttentionParams(*(linear_weights(m)[0] for m in (self.q, self.k, self.v, self.o)))

    def load_numpy(self, params: AttentionParams) -> None:
        """Copy NumPy-convention projections into this module (cast to its dtype)."""
        params, _ = check_attention_params(params, self.n_heads)
        for m, w, name in zip((self.q, self.k, self.v, self.o), params, AttentionParams._fields):
            if w.shape != (self.d_model, self.d_model):
                raise ValueError(f"{name} must have shape ({self.d_model}, {self.d_model}), got {w.shape}")
            load_linear(m, w)


class Block(nn.Module):
    """One pre-norm block: ``h = x + attn(LN(x))``, ``y = h + ffn(LN(h))``."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, *, causal: bool = True):
        super().__init__()
        self.attention = CausalSelfAttention(d_model, n_heads, causal=causal)
        self.ffn = PositionwiseFFN(d_model, d_ff, activation="relu")

    def forward(self, x: torch.Tensor, *, last_only: bool = False) -> torch.Tensor:
        """The block's output for ``x`` of shape ``(..., T, d_model)``; ``last_only``: at the last position only."""
        _check_float_tensor(x, "x", self.attention.d_model)
        residual = x[..., -1:, :] if last_only else x
        h = residual + self.attention(layer_norm(x), last_only=last_only)
        return h + self.ffn(layer_norm(h))

    @classmethod
    def from_numpy(cls, attn_params: AttentionParams, ffn_params: FFNParams, *, n_heads: int,
                   causal: bool = True) -> Block:
        """A block holding exactly these NumPy weights, in their dtype."""
        ffn_params = ffn_params_of(ffn_params, "ffn_params")
        attn_params, d_attention = check_attention_params(attn_params, n_heads, "attn_params")
        if d_attention != ffn_params.d_model:
            raise ValueError(f"attn_params have d_model={d_attention} but ffn_params {ffn_params.d_model}")
        block = cls(ffn_params.d_model, n_heads, ffn_params.d_ff, causal=causal)
        block.to(torch_dtype(ffn_params.dtype))
        block.attention.load_numpy(attn_params)
        block.ffn = PositionwiseFFN.from_numpy(ffn_params, activation="relu")
        return block

    def to_numpy(self) -> tuple[AttentionParams, FFNParams]:
        """The block's weights for :func:`ffnbook.block.transformer_block` (``norm="pre"``, ReLU)."""
        return self.attention.to_numpy(), self.ffn.to_numpy()


#: The most blocks a :class:`TinyTransformer` may have (each is built and run in a Python loop).
MAX_BLOCKS = 1024


@dataclass(frozen=True)
class ModelConfig:
    """The shape of a :class:`TinyTransformer`."""

    vocab_size: int
    seq_len: int
    d_model: int = 64
    n_heads: int = 4
    d_ff: int = 256
    n_blocks: int = 2

    @property
    def expansion_ratio(self) -> float:
        """``d_ff / d_model``, the FFN's width as a multiple of the model's."""
        return self.d_ff / self.d_model

    def __post_init__(self):
        # Kept as plain ints: a numpy integer would reach torch calls that take only ints.
        for name in ("vocab_size", "seq_len", "d_model", "n_heads", "d_ff"):
            object.__setattr__(self, name, require_positive_int(getattr(self, name), name))
        object.__setattr__(self, "n_blocks", require_positive_int(self.n_blocks, "n_blocks", maximum=MAX_BLOCKS))
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} must be divisible by n_heads={self.n_heads}")


class Trace(NamedTuple):
    """What :meth:`TinyTransformer.trace` saw inside the model, per block (lists of tensors)."""

    logits: torch.Tensor  #: (n, seq_len, vocab_size)
    block_inputs: list  #: per block, the residual stream entering it, (n, seq_len, d_model)
    ffn_inputs: list  #: per block, the FFN's input LN(h), (n, seq_len, d_model)
    ffn_hidden: list  #: per block, the FFN's hidden layer after ReLU, (n, seq_len, d_ff)
    ffn_outputs: list  #: per block, what the FFN added to the stream, (n, seq_len, d_model)
    attention_outputs: list  #: per block, what attention added, (n, seq_len, d_model)
    attention_weights: list  #: per block, (n, n_heads, seq_len, seq_len)
    final: torch.Tensor  #: the residual stream after the last block, before the final norm


class Knock(NamedTuple):
    """A sublayer's output replaced by ``value`` only where ``where`` is true (see :meth:`TinyTransformer.trace`).

    ``value`` is ``"zero"`` or a replacement tensor; ``where`` is a bool
    tensor ``(n, seq_len)`` (or ``(seq_len,)``, the same for every prompt);
    ``None`` replaces the output at every position.
    """

    value: object
    where: torch.Tensor | None = None


class TinyTransformer(nn.Module):
    """Embeddings, ``n_blocks`` pre-norm :class:`Block` s, a final layer norm and an unembedding.

    >>> m = TinyTransformer(ModelConfig(vocab_size=20, seq_len=6, d_model=16, n_heads=2, d_ff=32))
    >>> m(torch.zeros(3, 6, dtype=torch.long)).shape
    torch.Size([3, 6, 20])
    """

    def __init__(self, config: ModelConfig):
        super().__init__()
        if not isinstance(config, ModelConfig):
            raise TypeError(f"config must be a ModelConfig, got {type(config).__name__}")
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.position = nn.Embedding(config.seq_len, config.d_model)
        self.blocks = nn.ModuleList(
            Block(config.d_model, config.n_heads, config.d_ff) for _ in range(config.n_blocks))
        self.unembed = nn.Linear(config.d_model, config.vocab_size, bias=False)

    def _check_tokens(self, tokens) -> torch.Tensor:
        if isinstance(tokens, np.ndarray):
            tokens = torch.from_numpy(tokens)
        if not isinstance(tokens, torch.Tensor) or tokens.dtype != torch.long:
            raise TypeError(f"tokens must be an int64 tensor or array, got {getattr(tokens, 'dtype', type(tokens))}")
        if tokens.dim() != 2 or not 1 <= tokens.shape[1] <= self.config.seq_len:
            raise ValueError(f"tokens must have shape (n, seq_len ≤ {self.config.seq_len}), got {tuple(tokens.shape)}")
        if tokens.numel() and (tokens.min() < 0 or tokens.max() >= self.config.vocab_size):
            raise ValueError(f"tokens must hold ids in [0, {self.config.vocab_size}), got "
                             f"{int(tokens.min())} to {int(tokens.max())}")
        return tokens

    def forward(self, tokens, *, query_only: bool = False) -> torch.Tensor:
        """Logits ``(n, seq_len, vocab_size)`` for int64 tokens ``(n, seq_len)``, block by block.

        Each block runs :meth:`Block.forward`. ``query_only=True`` returns
        only the last position's logits, ``(n, vocab_size)``: all that
        training scores; the last block then computes that position alone.
        """
        require_bool(query_only, "query_only")
        tokens = self._check_tokens(tokens)
        x = self.embed(tokens) + self.position(torch.arange(tokens.shape[-1]))
        for i, block in enumerate(self.blocks):  # the last block need only compute what is scored
            x = block(x, last_only=query_only and i == len(self.blocks) - 1)
        if query_only:
            x = x[..., -1, :]
        return self.unembed(layer_norm(x))

    def trace(self, tokens, *, ffn_ablation: dict | None = None,
              attention_ablation: dict | None = None, last_only: bool = False) -> Trace:
        """Run the model and keep every sublayer's input and output; optionally knock sublayers out.

        ``ffn_ablation`` and ``attention_ablation`` map a block index to
        ``"zero"`` (the sublayer adds nothing) or to a tensor that replaces
        the sublayer's output: shape ``(d_model,)`` for the same vector at
        every position, ``(seq_len, d_model)`` for one vector per position
        (mean ablation passes the sublayer's average output here), or
        ``(n, seq_len, d_model)`` for one vector per prompt and position (an
        output recorded on other prompts, for activation patching). A
        :class:`Knock` replaces the output only where its mask is true.

        ``last_only=True`` computes the last block at the last position
        alone (as :meth:`forward` with ``query_only``): its records and the
        logits then hold that one position, all that the ``→`` answer needs.
        """
        tokens = self._check_tokens(tokens)
        last_only = require_bool(last_only, "last_only")
        for name, table in (("ffn_ablation", ffn_ablation), ("attention_ablation", attention_ablation)):
            if table is not None and not isinstance(table, dict):
                raise TypeError(f"{name} must be a dict {{block index: 'zero', a tensor or a Knock}} or None, "
                                f"got {describe(table)}")
        n, seq_len = tokens.shape
        knocks = {"ffn": dict(ffn_ablation or {}), "attention": dict(attention_ablation or {})}
        shapes = ((self.config.d_model,), (seq_len, self.config.d_model), (n, seq_len, self.config.d_model))
        for kind, table in knocks.items():
            for index, how in table.items():
                require_index(index, f"{kind}_ablation's block index", len(self.blocks), of="the model's blocks")
                knock = how if isinstance(how, Knock) else Knock(how)
                if not (isinstance(knock.value, str) and knock.value == "zero"
                        or isinstance(knock.value, torch.Tensor) and tuple(knock.value.shape) in shapes):
                    raise ValueError(f"{kind} ablation of block {index} must be 'zero' or a tensor of shape "
                                     f"{shapes[0]}, {shapes[1]} or {shapes[2]}, "
                                     f"got {getattr(knock.value, 'shape', knock.value)!r}")
                if knock.where is not None and not (isinstance(knock.where, torch.Tensor)
                                                    and knock.where.dtype == torch.bool
                                                    and tuple(knock.where.shape) in ((seq_len,), (n, seq_len))):
                    raise ValueError(f"{kind} ablation of block {index}: where must be a bool tensor of shape "
                                     f"({seq_len},) or ({n}, {seq_len}), got {getattr(knock.where, 'shape', knock.where)!r}")
                table[index] = knock

        def knock_out(out, knock, last):  # last: out holds the last position alone
            value, where = knock.value, knock.where
            if last and not isinstance(value, str) and value.dim() > 1:
                value = value[..., -1:, :]
            if last and where is not None:
                where = where[..., -1:]
            new = torch.zeros_like(out) if isinstance(value, str) else value.expand_as(out)
            return new if where is None else torch.where(where.unsqueeze(-1), new, out)

        positions = torch.arange(tokens.shape[1])
        x = self.embed(tokens) + self.position(positions)
        record = {key: [] for key in ("block_inputs", "ffn_inputs", "ffn_hidden", "ffn_outputs",
                                      "attention_outputs", "attention_weights")}

        for i, block in enumerate(self.blocks):
            x_in, last = x, last_only and i == len(self.blocks) - 1
            attn_out, weights = block.attention(layer_norm(x), return_weights=True, last_only=last)
            if i in knocks["attention"]:
                attn_out = knock_out(attn_out, knocks["attention"][i], last)
            h = (x[:, -1:, :] if last else x) + attn_out
            ffn_in = layer_norm(h)
            hidden = block.ffn.activation(block.ffn.up(ffn_in))
            ffn_out = block.ffn.down(hidden)
            if i in knocks["ffn"]:
                ffn_out = knock_out(ffn_out, knocks["ffn"][i], last)
            x = h + ffn_out
            for key, value in zip(record, (x_in, ffn_in, hidden, ffn_out, attn_out, weights)):
                record[key].append(value)
        logits = self.unembed(layer_norm(x))
        return Trace(logits=logits, final=x, **record)


@dataclass(frozen=True)
class TrainConfig:
    """How :func:`train_on_facts` trains: optimiser, budget and seeds."""

    steps: int = 600
    batch_size: int = 128
    learning_rate: float = 3e-3
    weight_decay: float = 0.0
    eval_every: int = 50
    eval_contexts: int = 2  #: fresh prompts per fact when recall is measured
    seed: int = 0
    threads: int = 1  #: torch threads during training; fixed so reductions run in a fixed order

    def __post_init__(self):
        for name in ("steps", "batch_size", "eval_every", "eval_contexts"):
            require_positive_int(getattr(self, name), name)
        require_positive_int(self.threads, "threads", maximum=MAX_THREADS)
        require_number(self.learning_rate, "learning_rate", low=0, high=1, low_open=True, high_open=True)
        require_number(self.weight_decay, "weight_decay", low=0)
        require_seed(self.seed)


#: The most torch threads a training run or a page may ask for.
MAX_THREADS = 1024


def deterministic_torch(seed: int, threads: int = 1):
    """Seed torch, demand deterministic algorithms and fix the thread count; restore all on exit.

    A context manager; its arguments are checked when it is called, before ``with``.
    """
    return _deterministic_torch(require_seed(seed), require_positive_int(threads, "threads", maximum=MAX_THREADS))


@contextlib.contextmanager
def _deterministic_torch(seed: int, threads: int):
    old_threads = torch.get_num_threads()
    old_deterministic = torch.get_deterministic_debug_mode()
    old_state = torch.random.get_rng_state()
    torch.set_num_threads(threads)
    torch.set_deterministic_debug_mode("error")
    torch.manual_seed(seed)
    try:
        yield
    finally:
        torch.set_num_threads(old_threads)
        torch.set_deterministic_debug_mode(old_deterministic)
        torch.random.set_rng_state(old_state)


def use_deterministic_torch(threads: int = 1) -> None:
    """For a page or a notebook session: fix torch's thread count and demand deterministic algorithms.

    Training seeds itself (:func:`deterministic_torch`); this makes the
    measurements after it repeatable too, and with one thread the tiny
    model's many small operations also cost the least CPU time.
    """
    torch.set_num_threads(require_positive_int(threads, "threads", maximum=MAX_THREADS))
    torch.set_deterministic_debug_mode("error")  # as use_deterministic_algorithms(True), without importing Inductor


def parameter_count(config: ModelConfig, *, ffn: bool = True) -> int:
    """Trainable parameters of a :class:`TinyTransformer` of shape ``config``; ``ffn=False``: without its FFNs.

    Token embedding and unembedding (``vocab_size × d_model`` each, not
    tied), position embedding (``seq_len × d_model``), and per block the
    attention's four bias-free projections (``4 d_model²``) and the FFN's
    two matrices with their biases (``2 d_model d_ff + d_ff + d_model``);
    the layer norms have none.

    >>> parameter_count(ModelConfig(vocab_size=10, seq_len=4, d_model=8, n_heads=2, d_ff=16, n_blocks=1))
    728
    """
    c = require_instance(config, "config", ModelConfig)
    require_bool(ffn, "ffn")
    per_block = 4 * c.d_model**2 + (2 * c.d_model * c.d_ff + c.d_ff + c.d_model if ffn else 0)
    return (2 * c.vocab_size + c.seq_len) * c.d_model + c.n_blocks * per_block


def matched_width_without_ffn(config: ModelConfig) -> int:
    """The narrowest ``d_model`` (a multiple of ``n_heads``) at which the model without FFNs has as many parameters.

    The control that separates "the FFNs help" from "more parameters help":
    a model with no FFN, made wider until it has at least as many trainable
    parameters as ``config``'s model with its FFNs.

    >>> c = ModelConfig(vocab_size=81, seq_len=6, d_model=32, n_heads=4, d_ff=128, n_blocks=2)
    >>> d = matched_width_without_ffn(c)
    >>> d, parameter_count(c), parameter_count(replace(c, d_model=d), ffn=False)
    (52, 30272, 30368)
    """
    target = parameter_count(require_instance(config, "config", ModelConfig))
    d_model = config.d_model
    while parameter_count(replace(config, d_model=d_model), ffn=False) < target:
        d_model += config.n_heads
    return d_model


class NumericalEnvironment(NamedTuple):
    """What decides a trained model's last bits on this machine: CPU, torch's kernels, the BLAS library."""

    cpu: str  #: the processor's model name
    torch: str  #: torch's version
    cpu_capability: str  #: the instruction set torch's own CPU kernels use (ATen's capability)
    blas: str  #: the matrix-product library torch was built with
    threads: int  #: torch's thread count
    settings: dict  #: the environment variables that change those code paths, where set


#: Environment variables that change the floating-point code paths of torch, MKL and oneDNN.
NUMERICAL_SETTINGS = ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "ONEDNN_MAX_CPU_ISA", "OMP_NUM_THREADS")


def numerical_environment() -> NumericalEnvironment:
    """This process's numerical environment: why a model trained here can differ in its last bits from elsewhere.

    Sums rounded in another order (another instruction set, another BLAS
    code path, another thread count) change the last bit of a weight, and
    training can amplify that; two machines that print the same environment
    train the same weights.
    """
    import os
    import platform
    import re

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            cpu = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), cpu)
    except OSError:
        pass
    blas = re.search(r"BLAS_INFO=(\w+)", torch.__config__.show())
    return NumericalEnvironment(cpu, torch.__version__, torch.backends.cpu.get_cpu_capability(),
                                blas.group(1) if blas else "unknown", torch.get_num_threads(),
                                {key: os.environ[key] for key in NUMERICAL_SETTINGS if key in os.environ})


def numpy_block_max_diff(model: TinyTransformer, index: int, x) -> dict[str, float]:
    """Compare one block of ``model`` with :func:`ffnbook.block.transformer_block` on the same weights.

    The block's weights are exported to NumPy, converted to float64 and
    loaded into a fresh float64 :class:`Block`. ``x`` is a float64 array
    ``(seq_len, d_model)``. Returns the largest absolute differences:
    ``"no_mask"``, the block with its causal mask off against the NumPy
    block on ``x``; ``"causal"``, the masked block against the NumPy block
    run on each prefix ``x[:t+1]`` and read at its last position (a causal
    mask lets position ``t`` see exactly that prefix).
    """
    check_transformer(model)
    index = require_index(index, "index", len(model.blocks), of="the model's blocks")
    x = as_float_array(x, "x", finite=True).astype(np.float64)
    if x.ndim != 2 or x.shape[1] != model.config.d_model or x.shape[0] == 0:
        raise ValueError(f"x must have shape (seq_len, {model.config.d_model}), got {x.shape}")
    attn, ffn_params = model.blocks[index].to_numpy()
    attn = AttentionParams(*(np.asarray(w, dtype=np.float64) for w in attn))
    ffn_params = ffn_params.astype(np.float64)
    n_heads = model.config.n_heads
    expected = transformer_block(x, attn, ffn_params, n_heads=n_heads, norm="pre")
    expected_causal = np.stack([transformer_block(x[: t + 1], attn, ffn_params, n_heads=n_heads, norm="pre")[-1]
                                for t in range(len(x))])
    diffs = {}
    for name, causal, want in (("no_mask", False, expected), ("causal", True, expected_causal)):
        block = Block.from_numpy(attn, ffn_params, n_heads=n_heads, causal=causal)
        with torch.no_grad():
            got = block(torch.from_numpy(x)).numpy()
        diffs[name] = float(np.max(np.abs(got - want)))
    return diffs


def check_transformer(model, name: str = "model") -> TinyTransformer:
    """``model`` if it is a :class:`TinyTransformer`, else TypeError naming ``name``."""
    if not isinstance(model, TinyTransformer):
        raise TypeError(f"{name} must be a TinyTransformer, got {describe(model)}")
    return model


def check_prompts(prompts, model: TinyTransformer | None = None, name: str = "prompts") -> Prompts:
    """``prompts`` if they are :class:`~ffnbook.facts.Prompts` (of ``model``'s length, if given), else raise naming ``name``."""
    if not isinstance(prompts, Prompts):
        raise TypeError(f"{name} must be Prompts from ffnbook.facts (make_prompts, fact_prompts), got {describe(prompts)}")
    if model is not None:
        check_transformer(model)
    if model is not None and np.asarray(prompts.tokens).shape[1:] != (model.config.seq_len,):
        raise ValueError(f"{name} must have {model.config.seq_len} tokens each, as the model, got "
                         f"shape {np.asarray(prompts.tokens).shape}")
    return prompts


@torch.no_grad()
def answer_logits(model: TinyTransformer, prompts: Prompts, **ablations) -> torch.Tensor:
    """Logits at the ``→`` position of every prompt, ``(n, vocab_size)``; ablations as in :meth:`~TinyTransformer.trace`."""
    check_prompts(prompts, check_transformer(model))
    return model.trace(prompts.tokens, last_only=True, **ablations).logits[:, -1, :]


def guessed_objects(logits: torch.Tensor, world: FactWorld) -> np.ndarray:
    """Token id of the highest-scoring *object* in each row of ``logits`` ``(n, vocab_size)``.

    Only object tokens compete: the model is asked which object, so a guess
    at random is right with probability ``1 / n_objects``.
    """
    check_world(world)
    if not isinstance(logits, torch.Tensor) or not logits.is_floating_point() or logits.dim() != 2 \
            or logits.shape[1] != world.vocab_size:
        raise TypeError(f"logits must be a tensor (n, vocab_size={world.vocab_size}), got {describe(logits)}")
    if not torch.isfinite(logits).all():
        raise ValueError("logits must be finite: a NaN would pick an object at random")
    objects = torch.from_numpy(world.object_tokens())
    return objects[logits[:, objects].argmax(dim=-1)].numpy()


def recall(model: TinyTransformer, world: FactWorld, prompts: Prompts, **ablations) -> float:
    """Share of ``prompts`` answered with the right object (see :func:`guessed_objects`).

    Keyword arguments are ablations, as in :meth:`TinyTransformer.trace`.
    """
    check_world(world)
    guess = guessed_objects(answer_logits(model, prompts, **ablations), world)
    return float((guess == prompts.answers).mean())


class TrainResult(NamedTuple):
    """A trained model and how training went."""

    model: TinyTransformer
    initial_model: TinyTransformer  #: the same model before its first step
    history: dict  #: a list per key (step, loss with None at step 0, recall, held_out_recall), active_share a list per block
    model_config: ModelConfig
    train_config: TrainConfig


def active_share(model: TinyTransformer, prompts: Prompts, *, answer_only: bool = False) -> list[float]:
    """Per block, the share of FFN hidden units with a non-zero (ReLU) activation, per token.

    Averaged over every position of ``prompts``, or over the ``→`` positions
    only with ``answer_only``.
    """
    check_prompts(prompts, check_transformer(model))
    answer_only = require_bool(answer_only, "answer_only")
    with torch.no_grad():
        hidden = model.trace(prompts.tokens).ffn_hidden
    if answer_only:
        hidden = [h[:, -1, :] for h in hidden]
    return [float((h > 0).double().mean()) for h in hidden]


class _FactStream:
    """One training run's data: its batches, its evaluation prompts and its history.

    Shared by :func:`train_on_facts` and :func:`train_replicas`, so that a
    replica draws exactly the batches its own run would draw.
    """

    def __init__(self, world: FactWorld, train_facts, held_out_facts, model_config: ModelConfig,
                 train_config: TrainConfig, n_blocks: int):
        self.world, self.train_facts, self.config = world, train_facts, train_config
        self.seq_len = model_config.seq_len
        seed = train_config.seed
        self.rng = np.random.default_rng([seed, 1])  # prompts; the model's init uses torch's seed
        self.eval_prompts = make_prompts(world, repeat_facts(train_facts, train_config.eval_contexts),
                                         self.seq_len, np.random.default_rng([seed, 2]))
        self.held_prompts = None
        if held_out_facts is not None:
            self.held_prompts = make_prompts(world, repeat_facts(held_out_facts, train_config.eval_contexts),
                                             self.seq_len, np.random.default_rng([seed, 3]))
        self.history = {"step": [], "loss": [], "recall": [], "held_out_recall": [],
                        "active_share": [[] for _ in range(n_blocks)]}
        self.losses: list[float] = []

    def batch(self) -> Prompts:
        pick = self.rng.integers(0, len(self.train_facts), size=self.config.batch_size)
        return _draw_prompts(self.world, self.train_facts[pick], self.seq_len, self.rng)  # facts checked once

    def due(self, step: int) -> bool:
        return step % self.config.eval_every == 0 or step == self.config.steps

    def record(self, step: int, model: TinyTransformer) -> None:
        model.eval()
        h = self.history
        h["step"].append(step)
        h["loss"].append(float(np.mean(self.losses)) if self.losses else None)  # none before the first step
        self.losses = []
        with torch.no_grad():
            trace = model.trace(self.eval_prompts.tokens)  # one pass for recall and sparsity
        guesses = guessed_objects(trace.logits[:, -1, :], self.world)
        h["recall"].append(float((guesses == self.eval_prompts.answers).mean()))
        if self.held_prompts is not None:
            h["held_out_recall"].append(recall(model, self.world, self.held_prompts))
        for block, hidden in enumerate(trace.ffn_hidden):
            h["active_share"][block].append(float((hidden > 0).double().mean()))


def _ffn_parameters(model: TinyTransformer) -> list[torch.Tensor]:
    return [p for block in model.blocks for p in block.ffn.parameters()]


def _silence_ffns(model: TinyTransformer) -> None:
    """Set every FFN weight and bias to zero: each FFN then adds exactly nothing."""
    with torch.no_grad():
        for p in _ffn_parameters(model):
            p.zero_()


def _copy_model(model: TinyTransformer) -> TinyTransformer:
    twin = TinyTransformer(model.config)
    twin.load_state_dict(model.state_dict())
    return twin.eval()


def train_on_facts(world: FactWorld, train_facts, model_config: ModelConfig,
                   train_config: TrainConfig = TrainConfig(), *, held_out_facts=None,
                   without_ffn: bool = False, initial_model: TinyTransformer | None = None) -> TrainResult:
    """Train a :class:`TinyTransformer` to answer prompts about ``train_facts``.

    Every step draws a fresh batch of prompts (facts uniformly at random,
    filler and positions fresh) and minimises the cross-entropy of the right
    object at the ``→`` position, with AdamW. Every ``eval_every`` steps it
    records the recall on fixed evaluation prompts (``eval_contexts`` per
    fact, never used for training), the recall on ``held_out_facts`` if
    given, the mean training loss since the last record, and the share of
    FFN hidden units active per token in each block (all positions).

    ``without_ffn=True`` trains the control without FFNs: every FFN weight
    and bias is set to zero before the first step and never trained, so each
    block adds only its attention (the FFN's output is exactly zero throughout).
    ``initial_model``: start from a copy of these weights (a model of shape
    ``model_config``) instead of drawing them from ``train_config.seed``.

    The same arguments give bit-identical weights on the same machine.
    """
    train_facts = check_facts(world, train_facts, "train_facts")
    require_instance(model_config, "model_config", ModelConfig)
    require_instance(train_config, "train_config", TrainConfig)
    without_ffn = require_bool(without_ffn, "without_ffn")
    if model_config.vocab_size != world.vocab_size:
        raise ValueError(f"model_config.vocab_size is {model_config.vocab_size}, the world has {world.vocab_size} tokens")
    if held_out_facts is not None:
        held_out_facts = check_facts(world, held_out_facts, "held_out_facts")
    stream = _FactStream(world, train_facts, held_out_facts, model_config, train_config, model_config.n_blocks)

    if initial_model is not None and check_transformer(initial_model, "initial_model").config != model_config:
        raise ValueError(f"initial_model must have model_config's shape {model_config}, got {initial_model.config}")
    with deterministic_torch(train_config.seed, train_config.threads):
        model = TinyTransformer(model_config) if initial_model is None else _copy_model(initial_model).train()
        if without_ffn:
            _silence_ffns(model)
            for p in _ffn_parameters(model):
                p.requires_grad_(False)
        initial = _copy_model(model)
        trainable = [p for p in model.parameters() if p.requires_grad]
        optimiser = torch.optim.AdamW(trainable, lr=train_config.learning_rate,
                                      weight_decay=train_config.weight_decay, fused=True)  # one kernel per step
        stream.record(0, model)
        model.train()
        for step in range(1, train_config.steps + 1):
            batch = stream.batch()  # fresh prompts about random training facts
            logits = model(batch.tokens, query_only=True)  # scores at → only
            loss = nn.functional.cross_entropy(logits, torch.from_numpy(batch.answers))
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            stream.losses.append(float(loss.detach()))
            if stream.due(step):
                stream.record(step, model)
                model.train()
        model.eval()
    return TrainResult(model, initial, stream.history, model_config, train_config)


class Replica(NamedTuple):
    """One model of a batch trained by :func:`train_replicas`: its facts, its seed, its FFN width."""

    world: FactWorld
    train_facts: np.ndarray  #: (n, 2) (subject, relation) rows it trains on
    seed: int  #: its initial weights and its batches, as ``TrainConfig.seed`` in :func:`train_on_facts`
    held_out_facts: np.ndarray | None = None
    d_ff: int | None = None  #: its FFN width (None for the batch's width, 0 for no FFN, as ``without_ffn=True``)


def _replica_model(replica: Replica, model_config: ModelConfig) -> TinyTransformer:
    """The replica's initial model: for ``model_config``'s own width, exactly as :func:`train_on_facts` builds it.

    Replicas of one seed share every initial weight outside the FFNs,
    whatever their FFN width: a model of another width takes its embeddings,
    attention and unembedding from the model of ``model_config``'s width
    (drawing the FFNs first would move the random stream, and a comparison
    of widths would also compare initial weights). Its own FFN weights are
    drawn from the seed at its width.
    """
    width = model_config.d_ff if replica.d_ff in (None, 0) else replica.d_ff
    with deterministic_torch(replica.seed):
        model = TinyTransformer(model_config)
    if width != model_config.d_ff:
        with deterministic_torch(replica.seed):
            narrow = TinyTransformer(replace(model_config, d_ff=width))
        shared = {name: w for name, w in model.state_dict().items() if ".ffn." not in name}
        narrow.load_state_dict(shared, strict=False)
        model = narrow
    if replica.d_ff == 0:
        _silence_ffns(model)
    return model


def _fused(weights: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Stacked weights with each block's query, key and value projections as one matrix, ``attention.qkv``.

    The three read the same normalised input, so one product computes all
    three; stacked ``(R, d_model, d_model)`` each, fused ``(R, 3 d_model, d_model)``.
    """
    fused = {}
    for name, w in weights.items():
        if name.endswith(".attention.q.weight"):
            block = name[: -len("q.weight")]
            fused[block + "qkv.weight"] = torch.cat([weights[block + p + ".weight"] for p in "qkv"], dim=1)
        elif not name.endswith((".attention.k.weight", ".attention.v.weight")):
            fused[name] = w
    return fused


def _stacked_logits(weights: dict[str, torch.Tensor], tokens: torch.Tensor, config: ModelConfig,
                    ffns: list | None = None) -> torch.Tensor:
    """The ``→`` logits of several models at once, ``(R, n, vocab_size)``, from weights stacked along a first axis.

    ``weights`` maps each name of a :class:`TinyTransformer`'s
    ``state_dict()`` to the ``R`` models' tensors stacked, with the query,
    key and value projections fused (:func:`_fused`); ``tokens`` is
    ``(R, n, seq_len)``: model ``r`` reads ``tokens[r]``. It computes what
    ``TinyTransformer.forward(tokens[r], query_only=True)`` computes, with one
    batched matrix product per weight matrix for all ``R`` models instead of
    one product per model, so training many small models costs few large
    operations (tested equal to the model's own forward). ``ffns`` lists the
    FFNs as ``(start, stop, weights)``: the models ``start`` to ``stop - 1``
    share an FFN width, and ``weights`` holds their FFN tensors, stacked; a
    model in no such range has no FFN. ``None``: every model's FFN is in
    ``weights``. ``config`` gives ``n_heads``. Its inputs are not checked:
    :func:`train_replicas` checks them once before training.
    """
    R, n, T = tokens.shape
    d = config.d_model
    H, d_head = config.n_heads, d // config.n_heads
    ffns = [(0, R, weights)] if ffns is None else ffns
    vocab = weights["embed.weight"].shape[1]
    offsets = (torch.arange(R) * vocab).view(R, 1, 1)  # model r's rows of the flattened embedding tables
    x = nn.functional.embedding(tokens + offsets, weights["embed.weight"].reshape(R * vocab, d))
    x = (x + weights["position.weight"][:, None, :T, :]).reshape(R, n * T, d)

    def linear(x, w, bias=None):  # x (R, m, in) @ w(R, out, in)^T (+ bias)
        return torch.bmm(x, w.transpose(1, 2)) if bias is None else torch.baddbmm(bias.unsqueeze(1), x, w.transpose(1, 2))

    def heads(t, length):  # (R, n * length, d) -> (R * n, H, length, d_head)
        return t.reshape(R * n, length, H, d_head).transpose(1, 2)

    for i in range(config.n_blocks):
        last, b = i == config.n_blocks - 1, f"blocks.{i}."
        q, k, v = linear(layer_norm(x), weights[b + "attention.qkv.weight"]).split(d, dim=-1)
        length = 1 if last else T
        if last:  # the last block computes the scored → position alone
            q, x = q.reshape(R, n, T, d)[:, :, -1, :], x.reshape(R, n, T, d)[:, :, -1, :]
        mixed = nn.functional.scaled_dot_product_attention(heads(q, length), heads(k, T), heads(v, T),
                                                           is_causal=not last)  # → sees every position
        h = x + linear(mixed.transpose(1, 2).reshape(R, n * length, d), weights[b + "attention.o.weight"])
        parts, done = [], 0
        for start, stop, w in ffns:  # each width's FFN on its own models; those without pass h on
            parts += [h[done:start]] if start > done else []
            hidden = torch.relu(linear(layer_norm(h[start:stop]), w[b + "ffn.up.weight"], w[b + "ffn.up.bias"]))
            parts.append(h[start:stop] + linear(hidden, w[b + "ffn.down.weight"], w[b + "ffn.down.bias"]))
            done = stop
        parts += [h[done:]] if done < R else []
        x = torch.cat(parts) if len(parts) > 1 else parts[0]
    return torch.bmm(layer_norm(x), weights["unembed.weight"].transpose(1, 2))


class _AdamW:
    """AdamW as ``torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, fused=True)`` computes it.

    It calls the update that class calls, torch's functional
    ``torch.optim.adamw.adamw``, with the class's defaults (betas 0.9 and
    0.999, eps 1e-8), so its steps are bit for bit the class's (tested); the
    class would import ``torch._dynamo`` on first use, about 2 s of CPU time
    that a page pays for nothing.
    """

    def __init__(self, params: list[torch.Tensor], lr: float, weight_decay: float):
        self.params, self.lr, self.weight_decay = list(params), lr, weight_decay
        self.exp_avgs = [torch.zeros_like(p, memory_format=torch.preserve_format) for p in self.params]
        self.exp_avg_sqs = [torch.zeros_like(p, memory_format=torch.preserve_format) for p in self.params]
        self.steps = [torch.tensor(0.0) for _ in self.params]  # each tensor's step count, as the class keeps it

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        from torch.optim.adamw import adamw

        adamw(self.params, [p.grad for p in self.params], self.exp_avgs, self.exp_avg_sqs, [], self.steps, fused=True,
              amsgrad=False, beta1=0.9, beta2=0.999, lr=self.lr, weight_decay=self.weight_decay, eps=1e-8,
              maximize=False)


def train_replicas(replicas, model_config: ModelConfig, train_config: TrainConfig = TrainConfig()) -> list[TrainResult]:
    """Train several models at once, as one batched model: one :class:`TrainResult` per replica.

    Each replica is what :func:`train_on_facts` would train with
    ``TrainConfig.seed = replica.seed`` on its own world and facts (same
    initial weights, same batches, same evaluation prompts), and a replica
    with ``d_ff = 0`` what it trains with ``without_ffn=True``. All replicas
    share ``model_config`` (their worlds must have its vocabulary size) and
    every setting of ``train_config`` but the seed.

    The weights of all replicas are stacked along a leading axis, width
    group by width group, and each step runs ``_stacked_logits`` (the
    model's forward with one batched product per weight matrix) on all of
    them at once; each FFN width runs its FFNs on its own replicas, and a
    replica without FFN has none to run. AdamW then updates all the stacked
    weights together, element by element as it would one model's.
    The results agree with one-by-one training up to the rounding of the
    batched matrix products (tested), not bit for bit.

    Long because the replicas' checks, the stacking, the batched step and
    the unstacking of every replica's result read best as one sequence,
    mirroring :func:`train_on_facts` step for step.
    """
    require_instance(model_config, "model_config", ModelConfig)
    require_instance(train_config, "train_config", TrainConfig)
    replicas = require_sequence(replicas, "replicas", expected="a list of Replica",
                                item=lambda r, label: require_instance(r, label, Replica))
    if len(replicas) > 1024:
        raise ValueError(f"replicas must hold at most 1,024 models, got {len(replicas)}")
    checked = []
    for i, r in enumerate(replicas):
        check_world(r.world)
        require_seed(r.seed, f"replicas[{i}].seed")
        if r.world.vocab_size != model_config.vocab_size:
            raise ValueError(f"replicas[{i}]: its world has {r.world.vocab_size} tokens, "
                             f"model_config.vocab_size is {model_config.vocab_size}")
        if r.d_ff is not None and (isinstance(r.d_ff, bool) or not isinstance(r.d_ff, (int, np.integer))
                                   or not 0 <= r.d_ff <= model_config.d_ff):
            raise ValueError(f"replicas[{i}].d_ff must be None or an integer in [0, {model_config.d_ff}], got {r.d_ff!r}")
        held = None if r.held_out_facts is None else check_facts(r.world, r.held_out_facts,
                                                                  f"replicas[{i}].held_out_facts")
        checked.append(r._replace(train_facts=check_facts(r.world, r.train_facts, f"replicas[{i}].train_facts"),
                                  held_out_facts=held,
                                  seed=int(r.seed), d_ff=None if r.d_ff is None else int(r.d_ff)))
    replicas = checked
    configs = [replace(train_config, seed=r.seed) for r in replicas]
    streams = [_FactStream(r.world, r.train_facts, r.held_out_facts, model_config, c, model_config.n_blocks)
               for r, c in zip(replicas, configs)]
    starts = [_replica_model(r, model_config) for r in replicas]
    initial = [_copy_model(m) for m in starts]
    groups: dict[int, list[int]] = {}  # FFN width (0: none) -> the replicas of that width, in order
    for i, r in enumerate(replicas):
        groups.setdefault(model_config.d_ff if r.d_ff is None else r.d_ff, []).append(i)
    order = [i for members in groups.values() for i in members]  # the stack's rows, width group by width group

    old_threads, old_deterministic = torch.get_num_threads(), torch.get_deterministic_debug_mode()
    torch.set_num_threads(train_config.threads)
    torch.set_deterministic_debug_mode("error")
    try:
        states = [starts[i].state_dict() for i in order]
        stacked = _fused({name: torch.stack([s[name] for s in states]) for name in states[0] if ".ffn." not in name})
        ffns, start = [], 0
        for d_ff, members in groups.items():
            if d_ff:
                ffns.append((start, start + len(members), {name: torch.stack([starts[i].state_dict()[name]
                                                                              for i in members])
                                                           for name in states[0] if ".ffn." in name}))
            start += len(members)
        trainable = list(stacked.values()) + [p for _, _, w in ffns for p in w.values()]
        for p in trainable:
            p.requires_grad_(True)
        optimiser = _AdamW(trainable, train_config.learning_rate, train_config.weight_decay)
        models = [_copy_model(m) for m in starts]  # each replica's weights, copied out of the stack to evaluate

        def unstack():
            for row, i in enumerate(order):
                state = {name: p[row] for name, p in stacked.items() if not name.endswith("qkv.weight")}
                for name in (n for n in stacked if n.endswith("qkv.weight")):
                    for part, w in zip("qkv", stacked[name][row].split(model_config.d_model)):
                        state[name[: -len("qkv.weight")] + part + ".weight"] = w
                own = [(first, w) for first, stop, w in ffns if first <= row < stop]
                for first, w in own:
                    state.update({name: p[row - first] for name, p in w.items()})
                if not own:  # a replica without FFN: its FFN stays zero
                    state.update({name: p for name, p in starts[i].state_dict().items() if ".ffn." in name})
                models[i].load_state_dict(state)

        for i, s in enumerate(streams):
            s.record(0, initial[i])
        for step in range(1, train_config.steps + 1):
            batches = [streams[i].batch() for i in order]
            tokens = torch.from_numpy(np.stack([b.tokens for b in batches]))
            answers = torch.from_numpy(np.stack([b.answers for b in batches]))
            logits = _stacked_logits(stacked, tokens, model_config, ffns)  # (replicas, batch, vocab)
            losses = nn.functional.cross_entropy(logits.transpose(1, 2), answers, reduction="none").mean(dim=1)
            optimiser.zero_grad()
            losses.sum().backward()  # each replica's gradient is that of its own mean loss
            optimiser.step()
            for i, value in zip(order, losses.detach().tolist()):
                streams[i].losses.append(value)
            if streams[0].due(step):
                with torch.no_grad():
                    unstack()
                for s, model in zip(streams, models):
                    s.record(step, model)
    finally:
        torch.set_num_threads(old_threads)
        torch.set_deterministic_debug_mode(old_deterministic)
    return [TrainResult(m, init, s.history, replace(model_config, d_ff=m.config.d_ff), c)
            for m, init, s, c in zip(models, initial, streams, configs)]


def training_flops(model_config: ModelConfig, train_config: TrainConfig, n_replicas: int = 1) -> float:
    """The usual estimate of training compute, 6 × parameters × tokens, for ``n_replicas`` models.

    Forward and backward pass together cost about six floating-point
    operations per parameter and token (two for the forward multiply-add,
    four for the two products of the backward pass). Every parameter is
    counted, embeddings included, and every token of every prompt, though
    training scores only the last: a lower bound on the work a step does is
    this count divided by the machine's peak rate.

    >>> c = ModelConfig(vocab_size=10, seq_len=4, d_model=8, n_heads=2, d_ff=16, n_blocks=1)
    >>> training_flops(c, TrainConfig(steps=10, batch_size=2))  # 6 * 728 parameters * 10 * 2 * 4 tokens
    349440.0
    """
    require_instance(model_config, "model_config", ModelConfig)
    require_instance(train_config, "train_config", TrainConfig)
    n_replicas = require_positive_int(n_replicas, "n_replicas")
    parameters = sum(p.numel() for p in TinyTransformer(model_config).parameters())
    tokens = train_config.steps * train_config.batch_size * model_config.seq_len
    return 6.0 * parameters * tokens * n_replicas


def first_step_reaching(history: dict, key: str, level: float) -> int | None:
    """The first recorded step at which ``history[key]`` is at least ``level`` (None if never).

    >>> first_step_reaching({"step": [0, 50, 100], "recall": [0.1, 0.9, 1.0]}, "recall", 0.9)
    50
    """
    if not isinstance(history, dict) or "step" not in history:
        raise TypeError(f"history must be a training history (a dict with 'step'), got {describe(history)}")
    if not isinstance(key, str) or key not in history or key == "step":
        raise ValueError(f"key must name a series of history ({', '.join(k for k in history if k != 'step')}), "
                         f"got {key!r}")
    level = require_number(level, "level")
    for step, value in zip(history["step"], history[key]):
        if value >= level:
            return int(step)
    return None
