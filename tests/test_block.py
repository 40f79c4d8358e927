"""The NumPy block against PyTorch's own layers, and the influence matrix against brute force."""

from __future__ import annotations

import numpy as np
import pytest

import ffnbook
from ffnbook import block
from ffnbook.plotting import BookFigure

D_MODEL, D_FF, N_HEADS, SEQ = 16, 64, 4, 7


@pytest.fixture
def weights():
    return (ffnbook.init_attention_params(D_MODEL, seed=5), ffnbook.init_ffn_params(D_MODEL, D_FF, seed=6))


# --- layer norm --------------------------------------------------------------------------


def test_layer_norm_gives_zero_mean_unit_variance_per_position(tokens):
    y = block.layer_norm(tokens, eps=1e-12)
    np.testing.assert_allclose(y.mean(axis=-1), 0.0, atol=1e-12)
    np.testing.assert_allclose(y.var(axis=-1), 1.0, atol=1e-9)


def test_layer_norm_variance_gap_is_eps_over_var_plus_eps(tokens):
    # var(LN(x)) = var(x) / (var(x) + eps) exactly, by the definition.
    eps = 1e-3
    expected = tokens.var(axis=-1) / (tokens.var(axis=-1) + eps)
    np.testing.assert_allclose(block.layer_norm(tokens, eps=eps).var(axis=-1), expected, rtol=1e-12)


def test_layer_norm_matches_torch(tokens):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    gain, bias = rng.standard_normal(16), rng.standard_normal(16)
    expected = torch.nn.functional.layer_norm(
        torch.from_numpy(tokens), (16,), torch.from_numpy(gain), torch.from_numpy(bias), eps=1e-5
    ).numpy()
    np.testing.assert_allclose(block.layer_norm(tokens, 1e-5, gain, bias), expected, atol=1e-12)
    plain = torch.nn.functional.layer_norm(torch.from_numpy(tokens), (16,)).numpy()
    np.testing.assert_allclose(block.layer_norm(tokens), plain, atol=1e-12)


def test_layer_norm_keeps_float32(tokens):
    assert block.layer_norm(tokens.astype(np.float32)).dtype == np.float32


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"eps": 0.0}, ValueError, "eps must be a positive finite number, got 0.0"),
        ({"eps": "small"}, TypeError, "eps must be a positive finite number, got str 'small'"),
        ({"gain": np.ones(3)}, ValueError, "gain must have shape (16,), got (3,)"),
        ({"bias": np.ones(16, dtype=np.float32)}, TypeError, "bias has dtype float32 but x is float64"),
    ],
)
def test_layer_norm_rejects_bad_arguments(tokens, kwargs, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        block.layer_norm(tokens, **kwargs)


def test_layer_norm_computes_integer_input_in_float_and_rejects_a_scalar():
    ints = np.array([[1, 2, 3, 6]])
    np.testing.assert_array_equal(block.layer_norm(ints), block.layer_norm(ints.astype(np.float64)))
    with pytest.raises(ValueError, match="got a scalar"):
        block.layer_norm(np.float64(1.0))


# --- the block against torch's layers -----------------------------------------------------


def _torch_layers(weights):
    torch = pytest.importorskip("torch")
    attn_p, ffn_p = weights
    mha = torch.nn.MultiheadAttention(D_MODEL, N_HEADS, bias=False, batch_first=True).double()
    up, down = torch.nn.Linear(D_MODEL, D_FF).double(), torch.nn.Linear(D_FF, D_MODEL).double()
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.from_numpy(np.concatenate([attn_p.Wq.T, attn_p.Wk.T, attn_p.Wv.T])))
        mha.out_proj.weight.copy_(torch.from_numpy(attn_p.Wo.T.copy()))
        up.weight.copy_(torch.from_numpy(ffn_p.W1.T.copy()))
        up.bias.copy_(torch.from_numpy(ffn_p.b1))
        down.weight.copy_(torch.from_numpy(ffn_p.W2.T.copy()))
        down.bias.copy_(torch.from_numpy(ffn_p.b2))
    norm1 = torch.nn.LayerNorm(D_MODEL).double()  # gain 1, bias 0 at initialisation
    norm2 = torch.nn.LayerNorm(D_MODEL).double()
    return torch, mha, up, down, norm1, norm2


def test_post_norm_block_equals_hand_composed_torch_layers(weights, tokens):
    torch, mha, up, down, norm1, norm2 = _torch_layers(weights)
    with torch.no_grad():
        x = torch.from_numpy(tokens)
        h = norm1(x + mha(x, x, x, need_weights=False)[0])
        expected = norm2(h + down(torch.relu(up(h)))).numpy()
    got = block.transformer_block(tokens, *weights, n_heads=N_HEADS, norm="post", activation="relu")
    np.testing.assert_allclose(got, expected, atol=1e-12)


def test_pre_norm_block_equals_hand_composed_torch_layers(weights, tokens):
    torch, mha, up, down, norm1, norm2 = _torch_layers(weights)
    with torch.no_grad():
        x = torch.from_numpy(tokens)
        n = norm1(x)
        h = x + mha(n, n, n, need_weights=False)[0]
        expected = (h + down(torch.nn.functional.gelu(up(norm2(h))))).numpy()
    got = block.transformer_block(tokens, *weights, n_heads=N_HEADS, norm="pre", activation="gelu")
    np.testing.assert_allclose(got, expected, atol=1e-12)


@pytest.mark.parametrize("norm_first, norm", [(False, "post"), (True, "pre")])
def test_block_equals_torch_transformer_encoder_layer(weights, tokens, norm_first, norm):
    """PyTorch's own encoder layer, with its attention biases zeroed and no dropout."""
    torch = pytest.importorskip("torch")
    attn_p, ffn_p = weights
    layer = (
        torch.nn.TransformerEncoderLayer(
            D_MODEL,
            N_HEADS,
            dim_feedforward=D_FF,
            dropout=0.0,
            activation="relu",
            batch_first=True,
            norm_first=norm_first,
        )
        .double()
        .eval()
    )
    with torch.no_grad():
        layer.self_attn.in_proj_weight.copy_(torch.from_numpy(np.concatenate([attn_p.Wq.T, attn_p.Wk.T, attn_p.Wv.T])))
        layer.self_attn.in_proj_bias.zero_()
        layer.self_attn.out_proj.weight.copy_(torch.from_numpy(attn_p.Wo.T.copy()))
        layer.self_attn.out_proj.bias.zero_()
        layer.linear1.weight.copy_(torch.from_numpy(ffn_p.W1.T.copy()))
        layer.linear1.bias.copy_(torch.from_numpy(ffn_p.b1))
        layer.linear2.weight.copy_(torch.from_numpy(ffn_p.W2.T.copy()))
        layer.linear2.bias.copy_(torch.from_numpy(ffn_p.b2))
        expected = layer(torch.from_numpy(tokens)).numpy()
    got = block.transformer_block(tokens, *weights, n_heads=N_HEADS, norm=norm, activation="relu")
    np.testing.assert_allclose(got, expected, atol=1e-10)


def test_block_keeps_shape_and_placements_differ(weights, tokens):
    pre = block.transformer_block(tokens, *weights, n_heads=N_HEADS, norm="pre")
    post = block.transformer_block(tokens, *weights, n_heads=N_HEADS, norm="post")
    assert pre.shape == post.shape == tokens.shape
    assert np.abs(pre - post).max() > 1e-3


def test_compare_norm_placements_reports_rms(weights, tokens):
    c = block.compare_norm_placements(tokens, *weights, n_heads=N_HEADS)
    assert c.same_shape
    # A layer norm's output has variance var/(var+eps) at every position, so RMS ≈ 1.
    assert c.post_output_rms == pytest.approx(1.0, abs=1e-4)
    pre = block.transformer_block(tokens, *weights, n_heads=N_HEADS, norm="pre")
    assert c.pre_output_rms == pytest.approx(float(np.sqrt((pre**2).mean())), rel=1e-12)
    assert c.input_rms == pytest.approx(float(np.linalg.norm(tokens) / np.sqrt(tokens.size)), rel=1e-12)
    assert all(type(v) is float for v in c[1:])


def test_block_rejects_bad_arguments(weights, tokens):
    attn_p, ffn_p = weights
    with pytest.raises(ValueError, match="norm must be 'pre' or 'post', got 'both'"):
        block.transformer_block(tokens, attn_p, ffn_p, n_heads=N_HEADS, norm="both")
    narrow = ffnbook.init_ffn_params(8, 32)
    with pytest.raises(ValueError, match="attention has d_model=16 but the FFN has d_model=8"):
        block.transformer_block(tokens, attn_p, narrow, n_heads=N_HEADS)
    with pytest.raises(ValueError, match="must be divisible by n_heads=3"):
        block.transformer_block(tokens, attn_p, ffn_p, n_heads=3)
    with pytest.raises(ValueError, match="unknown activation 'tanh'"):
        block.transformer_block(tokens, attn_p, ffn_p, n_heads=N_HEADS, activation="tanh")


# --- the parallel block (GPT-J, PaLM) -------------------------------------------------------


def test_parallel_block_equals_hand_composed_torch_layers(weights, tokens):
    # y = x + Attention(LN(x)) + FFN(LN(x)): one layer norm feeds both sublayers, as in GPT-J's
    # mesh_transformer/layers.py and PaLM's formula (arXiv:2204.02311, §2).
    torch, mha, up, down, norm1, _ = _torch_layers(weights)
    with torch.no_grad():
        x = torch.from_numpy(tokens)
        n = norm1(x)
        expected = (x + mha(n, n, n, need_weights=False)[0] + down(torch.nn.functional.gelu(up(n)))).numpy()
    got = block.parallel_block(tokens, *weights, n_heads=N_HEADS, activation="gelu")
    np.testing.assert_allclose(got, expected, atol=1e-12)


def test_parallel_and_serial_blocks_agree_when_attention_adds_nothing(weights, tokens):
    # With attention's output projection zero, h = x in the serial block, so the FFN reads LN(x) in
    # both layouts and the blocks coincide; with real attention they differ.
    attn_p, ffn_p = weights
    silent = attn_p._replace(Wo=np.zeros_like(attn_p.Wo))
    serial = block.transformer_block(tokens, silent, ffn_p, n_heads=N_HEADS, norm="pre")
    np.testing.assert_array_equal(block.parallel_block(tokens, silent, ffn_p, n_heads=N_HEADS), serial)
    loud = block.transformer_block(tokens, attn_p, ffn_p, n_heads=N_HEADS, norm="pre")
    assert np.abs(block.parallel_block(tokens, attn_p, ffn_p, n_heads=N_HEADS) - loud).max() > 1e-3


def test_ffn_branches_add_up_to_the_blocks(weights, tokens):
    attn_p, ffn_p = weights
    attention = ffnbook.self_attention(block.layer_norm(tokens), attn_p, n_heads=N_HEADS)
    parallel = block.ffn_branch(tokens, attn_p, ffn_p, n_heads=N_HEADS, layout="parallel")
    np.testing.assert_allclose(
        tokens + attention + parallel, block.parallel_block(tokens, attn_p, ffn_p, n_heads=N_HEADS), atol=1e-12
    )
    serial = block.ffn_branch(tokens, attn_p, ffn_p, n_heads=N_HEADS, layout="serial")
    np.testing.assert_allclose(
        tokens + attention + serial,
        block.transformer_block(tokens, attn_p, ffn_p, n_heads=N_HEADS, norm="pre"),
        atol=1e-12,
    )


def test_parallel_ffn_branch_reads_its_own_position_only(weights, tokens):
    influences = block.ffn_branch_influences(tokens[0], *weights, n_heads=N_HEADS)
    off = ~np.eye(SEQ, dtype=bool)
    assert np.all(influences["parallel"][off] == 0.0)  # exactly: no other position's bits moved
    assert np.all(np.diag(influences["parallel"]) > 0)
    assert np.all(influences["serial"][off] > 0)  # through the attention in front of it
    # Brute force for one entry: edit position 0 only, and the parallel branch elsewhere is unchanged.
    edited = tokens[0].copy()
    edited[0] += 1.0
    before = block.ffn_branch(tokens[0], *weights, n_heads=N_HEADS, layout="parallel")
    after = block.ffn_branch(edited, *weights, n_heads=N_HEADS, layout="parallel")
    np.testing.assert_array_equal(after[1:], before[1:])
    assert np.abs(after[0] - before[0]).max() > 0


def test_parallel_block_rejects_bad_arguments(weights, tokens):
    attn_p, ffn_p = weights
    with pytest.raises(ValueError, match="layout must be one of"):
        block.ffn_branch(tokens, attn_p, ffn_p, n_heads=N_HEADS, layout="side-by-side")
    with pytest.raises(ValueError, match="attention has d_model=16 but the FFN has d_model=8"):
        block.parallel_block(tokens, attn_p, ffnbook.init_ffn_params(8, 32), n_heads=N_HEADS)
    with pytest.raises(TypeError, match="x must be an array of real numbers"):
        block.parallel_block(tokens.astype(str), attn_p, ffn_p, n_heads=N_HEADS)
    ints = np.round(tokens).astype(int)  # integer input is computed in float, not refused
    np.testing.assert_array_equal(
        block.parallel_block(ints, attn_p, ffn_p, n_heads=N_HEADS),
        block.parallel_block(ints.astype(np.float64), attn_p, ffn_p, n_heads=N_HEADS),
    )


# --- influence ------------------------------------------------------------------------------


def test_influence_entry_equals_brute_force(weights, tokens):
    attn_p, _ = weights
    layer = ffnbook.attention_layer(attn_p, n_heads=N_HEADS)
    x = tokens[0]
    m = block.influence_matrix(layer, x, step=1e-2, seed=3)
    # Recompute column j directly with the same direction the function documents.
    direction = np.random.default_rng([3, block._NUDGE_STREAM]).standard_normal(D_MODEL)
    direction /= np.linalg.norm(direction)  # a unit vector: the nudge has length `step`
    j = 4
    nudged = x.copy()
    nudged[j] += 1e-2 * direction
    column = np.abs(layer(nudged) - layer(x)).max(axis=-1) / 1e-2
    np.testing.assert_allclose(m[:, j], column, rtol=1e-12)


def test_ffn_influence_is_diagonal_and_attention_is_dense(weights, tokens):
    x = tokens[0]
    got = block.block_influences(x, *weights, n_heads=N_HEADS, norm="post")
    off = ~np.eye(SEQ, dtype=bool)
    assert got["ffn"][off].max() < 1e-12
    assert got["ffn"].diagonal().min() > 1e-3
    assert got["attention"][off].min() > 0
    assert got["block"][off].min() > 0


def test_influence_of_linear_layer_is_its_gain():
    """For y = x @ A the change at the nudged position is step·|u @ A|, exactly linear."""
    A = np.random.default_rng(1).standard_normal((5, 5))
    x = np.random.default_rng(2).standard_normal((4, 5))
    m = block.influence_matrix(lambda t: t @ A, x, step=0.5)
    direction = np.random.default_rng([0, block._NUDGE_STREAM]).standard_normal(5)
    direction /= np.linalg.norm(direction)
    np.testing.assert_allclose(np.diag(m), np.abs(direction @ A).max(), rtol=1e-12)
    assert m[~np.eye(4, dtype=bool)].max() == 0.0


def test_causal_layer_gives_lower_triangular_influence():
    x = np.random.default_rng(3).standard_normal((6, 4))
    m = block.influence_matrix(lambda t: np.cumsum(t, axis=-2), x)
    assert np.all(m[np.triu_indices(6, k=1)] == 0)
    assert np.all(m[np.tril_indices(6)] > 0)


def test_nudge_direction_is_not_the_first_input_token():
    """The direction must differ from random_tokens(..., seed) so a layer norm can see the nudge."""
    x = ffnbook.random_tokens((3, 8), seed=0)
    m = block.influence_matrix(lambda t: block.layer_norm(t), x, seed=0)
    assert np.diag(m).min() > 1e-3


def test_summarize_influence():
    s = block.summarize_influence(np.array([[1.0, 0.5, 0.0], [0.0, 3.0, 0.0], [0.25, 0.0, 2.0]]))
    assert s.diagonal_mean == pytest.approx(2.0)
    assert s.off_diagonal_max == 0.5
    assert s.off_diagonal_share == pytest.approx(0.75 / 6.75)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: block.influence_matrix("layer", np.zeros((3, 4))), TypeError, "layer must be a function"),
        (
            lambda: block.influence_matrix(lambda t: t, np.zeros((2, 3, 4))),
            ValueError,
            r"x must have shape \(seq_len, d_model\), got \(2, 3, 4\)",
        ),
        (
            lambda: block.influence_matrix(lambda t: t, np.zeros((3, 4)), step=-1),
            ValueError,
            "step must be a positive finite number",
        ),
        (lambda: block.influence_matrix(lambda t: t[:2], np.zeros((3, 4))), ValueError, "layer changed the shape"),
        (lambda: block.summarize_influence(np.ones((2, 3))), ValueError, "matrix must be square"),
        (lambda: block.summarize_influence(-np.ones((2, 2))), ValueError, "non-negative"),
        (lambda: block.influence_figure({"ffn": np.eye(2)}), ValueError, "missing"),
    ],
)
def test_influence_rejects_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_influence_figure_has_three_heatmaps(weights, tokens):
    fig = block.influence_figure(block.block_influences(tokens[0], *weights, n_heads=N_HEADS))
    assert isinstance(fig, BookFigure)
    heatmaps = [ax for ax in fig.figure.axes if ax.images]
    assert [ax.get_title() for ax in heatmaps] == ["attention sublayer", "FFN sublayer", "whole block"]
    assert fig.description.strip()


def test_block_diagram_draws_both_placements_in_order():
    fig = block.block_diagram()
    post, pre = fig.figure.axes
    assert (post.get_title(), pre.get_title()) == ("post-norm (original)", "pre-norm")

    def labels(ax):  # the step labels, top to bottom
        texts = [t for t in ax.texts if t.get_text() not in ("residual", "")]  # arrows are empty annotations
        return [t.get_text() for t in sorted(texts, key=lambda t: -t.get_position()[1])]

    # The same order as the equations that transformer_block implements.
    assert labels(post) == ["input x", "self-attention", "+", "layer norm", "FFN", "+", "layer norm", "output y"]
    assert labels(pre) == ["input x", "layer norm", "self-attention", "+", "layer norm", "FFN", "+", "output y"]


def test_the_nudge_has_length_step():
    """A layer returning each row's length sees a nudge of exactly `step` at zero input."""
    x = np.zeros((3, 6))
    layer = lambda t: np.repeat(np.linalg.norm(t, axis=-1, keepdims=True), 6, axis=-1)  # noqa: E731
    m = block.influence_matrix(layer, x, step=0.25)
    np.testing.assert_allclose(np.diag(m), 1.0, rtol=1e-14)
    assert m[~np.eye(3, dtype=bool)].max() == 0.0
