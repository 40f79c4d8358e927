"""The key–value memory page shows what ffnbook.memory computes now."""

from __future__ import annotations

import numpy as np
from sitecheck import figures, glued_after, number, page_text

from ffnbook import memory

PAGE = "key-value-memory"
D_MODEL, N_MEMORIES, THRESHOLD = 128, 64, 0.5


def test_exact_retrieval_numbers(site):
    keys, values = memory.random_memories(N_MEMORIES, D_MODEL, seed=0)
    params = memory.build_memory_ffn(keys, values, threshold=THRESHOLD)
    error = float(np.abs(memory.retrieve(params, keys).output - values).max())
    shown = glued_after(site, PAGE, "every output equals its stored value to within")
    assert shown == f"{error:.1e}" and number(shown) < 1e-12
    overlaps = keys @ keys.T
    np.fill_diagonal(overlaps, 0.0)
    shown = glued_after(site, PAGE, "the largest match between two different keys is")
    assert shown == f"{np.abs(overlaps).max():.2f}" and number(shown) < THRESHOLD


def test_noisy_query_numbers(site):
    mem = memory.random_memories(N_MEMORIES, D_MODEL, seed=0)
    clean = memory.query_example(mem, 7, 1.0, seed=3)
    noisy = memory.query_example(mem, 7, 2.0, seed=3)
    assert glued_after(site, PAGE, "with coefficient") == f"{clean.activation:.3f}"
    assert glued_after(site, PAGE, "points in the value") == f"{clean.cosine:.4f}"
    assert glued_after(site, PAGE, "Now") == str(noisy.n_fired)
    assert glued_after(site, PAGE, "right value drops to") == f"{noisy.cosine:.3f}"


def test_accuracy_numbers(site):
    levels = [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0]
    grid = memory.accuracy_grid(D_MODEL, [0.5, 1, 2, 4], levels, threshold=THRESHOLD)
    perfect = max(
        n for i, n in enumerate(levels) if all(r["accuracy"][j] == 1.0 for r in grid for j in range(i + 1))
    )
    assert number(glued_after(site, PAGE, "until the noise reaches length")) == perfect > 1.0
    fewest, most = grid[0], grid[-1]
    assert glued_after(site, PAGE, "pairs still recalls") == f"{fewest['accuracy'][-1]:.0%}"
    text = page_text(site, PAGE)
    assert f"the one with {most['n_memories']} pairs {most['accuracy'][-1]:.0%}" in text
    assert fewest["accuracy"][-1] > most["accuracy"][-1]  # what the sentence claims


def test_figures_have_alt_text(site):
    imgs = figures(site, PAGE)
    assert len(imgs) == 2
    assert all(len(img.get("alt", "").strip()) > 40 for img in imgs)
