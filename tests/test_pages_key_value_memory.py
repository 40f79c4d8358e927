"""The key–value memory page, looked up by glue key, against what ffnbook.memory computes now."""

from __future__ import annotations

import numpy as np
import pytest
from sitecheck import figures, glued

from ffnbook import memory

PAGE = "key-value-memory"
D_MODEL, N_MEMORIES, THRESHOLD, SLOT = 128, 64, 0.5, 7
NOISE_LEVELS = [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0]


@pytest.fixture(scope="module")
def memories():
    return memory.random_memories(N_MEMORIES, D_MODEL, seed=0)


def test_setup(site):
    assert (glued(site, PAGE, "kv_d_model"), glued(site, PAGE, "kv_n_memories")) == (D_MODEL, N_MEMORIES)
    assert glued(site, PAGE, "kv_threshold") == THRESHOLD


def test_exact_retrieval_numbers(site, memories):
    keys, values = memories
    # Brute force from the definition: relu((k·x - t)/(1 - t)) summed over values.
    out = np.maximum((keys @ keys.T - THRESHOLD) / (1 - THRESHOLD), 0) @ values
    assert glued(site, PAGE, "kv_exact_error") == pytest.approx(float(np.abs(out - values).max()), abs=1e-15)
    assert glued(site, PAGE, "kv_exact_error") < 1e-12
    assert glued(site, PAGE, "kv_units_fired") == N_MEMORIES  # one per query
    overlaps = keys @ keys.T
    np.fill_diagonal(overlaps, 0.0)
    assert glued(site, PAGE, "kv_max_overlap") == pytest.approx(float(np.abs(overlaps).max()))
    assert glued(site, PAGE, "kv_max_overlap") < THRESHOLD  # "below the threshold"


def test_noisy_query_numbers(site, memories):
    clean = memory.query_example(memories, SLOT, 1.0, seed=3)
    noisy = memory.query_example(memories, SLOT, 2.0, seed=3)
    assert glued(site, PAGE, "kv_slot") == SLOT
    assert glued(site, PAGE, "kv_two_noise") == 2 * glued(site, PAGE, "kv_one_noise")  # "doubling"
    assert glued(site, PAGE, "kv_one_fired") == 1
    assert glued(site, PAGE, "kv_one_activation") == pytest.approx(clean.activation)
    assert glued(site, PAGE, "kv_one_cosine") == pytest.approx(clean.cosine)
    assert glued(site, PAGE, "kv_two_fired") == noisy.n_fired > 1
    assert glued(site, PAGE, "kv_two_extra") == noisy.n_fired - 1
    assert glued(site, PAGE, "kv_two_cosine") == pytest.approx(noisy.cosine)
    assert glued(site, PAGE, "kv_two_cosine") > glued(site, PAGE, "kv_two_other_cosine")  # still read correctly


def test_accuracy_numbers(site):
    grid = memory.accuracy_grid(D_MODEL, [0.5, 1, 2, 4], NOISE_LEVELS, threshold=THRESHOLD)
    perfect = max(n for i, n in enumerate(NOISE_LEVELS)
                  if all(r["accuracy"][j] == 1.0 for r in grid for j in range(i + 1)))
    assert glued(site, PAGE, "kv_perfect_up_to") == perfect > 1.0  # "longer than the key itself"
    assert (glued(site, PAGE, "kv_ratio_min"), glued(site, PAGE, "kv_ratio_max")) == (0.5, 4.0)
    assert glued(site, PAGE, "kv_fewest") == 64 and glued(site, PAGE, "kv_most") == 512
    assert glued(site, PAGE, "kv_acc_fewest_high") == grid[0]["accuracy"][-1]
    assert glued(site, PAGE, "kv_acc_most_high") == grid[-1]["accuracy"][-1]
    assert glued(site, PAGE, "kv_acc_fewest_high") > glued(site, PAGE, "kv_acc_most_high")
    assert glued(site, PAGE, "kv_acc_most_zero") == 1.0 and glued(site, PAGE, "kv_most_ratio") == 4.0


def test_edit_numbers(site, memories):
    new_value = memory.random_memories(1, D_MODEL, seed=99).values[0]
    sparse = memory.edit_spill(memories, SLOT, new_value, threshold=THRESHOLD)
    spread = memory.edit_spill(memories, SLOT, new_value, threshold=glued(site, PAGE, "kv_low_threshold"))
    assert glued(site, PAGE, "kv_edit_error") < 1e-12
    assert glued(site, PAGE, "kv_sparse_units") == 1.0 and glued(site, PAGE, "kv_sparse_change") == 0.0
    assert glued(site, PAGE, "kv_spread_units") == pytest.approx(spread.units_per_key)
    assert glued(site, PAGE, "kv_spread_units") > 1
    assert glued(site, PAGE, "kv_spread_change") == pytest.approx(max(spread.other_changes))
    assert glued(site, PAGE, "kv_spread_change") > 0
    assert glued(site, PAGE, "kv_spread_recalled") == spread.other_still_recalled
    assert max(sparse.other_changes) == 0.0


def test_figures_have_alt_text_from_their_values(site, memories):
    imgs = figures(site, PAGE)
    assert len(imgs) == 3
    activation_alt, accuracy_alt, edit_alt = (img.get("alt", "") for img in imgs)
    ex = memory.query_example(memories, SLOT, 2.0, seed=3)
    assert f"key {SLOT} plus noise of length 2" in activation_alt
    assert f"slot {SLOT} reaches {ex.activation:.2f}" in activation_alt
    assert "64, 128, 256, 512 pairs in 128 dimensions" in accuracy_alt
    assert "at threshold 0.5, with 1.0 hidden units firing" in edit_alt
