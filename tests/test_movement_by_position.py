"""movement_by_position (per-position output change) against independent derivations."""

from __future__ import annotations

import pytest

import ffnbook
from ffnbook import position_independence

# --- movement_by_position ----------------------------------------------------------------


def brute_force_movement(layer, x, position, seed):
    """Per-position change, computed one position and one sequence at a time."""
    edited = x.copy()
    edited[..., position, :] = ffnbook.random_tokens(x[..., position, :].shape, seed=seed)
    before, after = layer(x), layer(edited)
    moved = []
    for i in range(x.shape[-2]):
        worst = 0.0
        for b in range(x.shape[0]):
            worst = max(worst, max(abs(after[b, i, j] - before[b, i, j]) for j in range(x.shape[-1])))
        moved.append(worst)
    return moved


@pytest.mark.parametrize("position", [0, 2, 4])
def test_movement_matches_a_brute_force_loop(small_params, position):
    x = ffnbook.random_tokens((2, 5, 16), seed=7)
    attention = ffnbook.attention_layer(ffnbook.init_attention_params(16, seed=1), n_heads=2)
    for layer in (ffnbook.ffn_layer(small_params, "gelu"), attention):
        got = position_independence.movement_by_position(layer, x, position, seed=3)
        assert got == pytest.approx(brute_force_movement(layer, x, position, 3), abs=0)


def test_only_the_edited_position_moves_for_the_ffn_and_all_move_for_attention(small_params, tokens):
    ffn_moved = position_independence.movement_by_position(ffnbook.ffn_layer(small_params), tokens, 0)
    assert ffn_moved[0] > 0.01 and all(m == 0.0 for m in ffn_moved[1:])
    attention = ffnbook.attention_layer(ffnbook.init_attention_params(16, seed=0))
    attn_moved = position_independence.movement_by_position(attention, tokens, 0)
    assert all(m > 1e-6 for m in attn_moved)


def test_movement_agrees_with_change_one_token(small_params, tokens):
    layer = ffnbook.ffn_layer(small_params, "relu")
    moved = position_independence.movement_by_position(layer, tokens, 3, seed=5)
    summary = ffnbook.change_one_token(layer, tokens, 3, seed=5)
    assert moved[3] == summary.changed_position
    assert max(moved[:3] + moved[4:]) == summary.other_positions


@pytest.mark.parametrize("bad, error", [(-1, ValueError), (7, ValueError), (1.0, TypeError), (True, TypeError)])
def test_movement_rejects_bad_positions(small_params, tokens, bad, error):
    with pytest.raises(error, match="position must be an integer"):
        position_independence.movement_by_position(ffnbook.ffn_layer(small_params), tokens, bad)
