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
    perfect = max(
        n for i, n in enumerate(NOISE_LEVELS) if all(r["accuracy"][j] == 1.0 for r in grid for j in range(i + 1))
    )
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
    assert len(imgs) == 5
    activation_alt, accuracy_alt, comparison_alt, edit_alt, statistics_alt = (img.get("alt", "") for img in imgs)
    ex = memory.query_example(memories, SLOT, 2.0, seed=3)
    assert f"key {SLOT} plus noise of length 2" in activation_alt
    assert f"slot {SLOT} reaches {ex.activation:.2f}" in activation_alt
    assert "64, 128, 256, 512 pairs in 128 dimensions" in accuracy_alt
    assert "64, 128, 256, 512, 1024 pairs in 128 dimensions" in comparison_alt
    assert "512 pairs queried with noise of length 0, 0.5, 1, 1.5, 2, 3, 4, 6" in comparison_alt
    assert "63 other stored keys" in edit_alt and "covariance-weighted edit (ROME)" in edit_alt
    assert "d_ff = 64" in statistics_alt


# --- the FFN memory beside linear associative memories -----------------------------------------

SEEDS = range(5)


def ffn_output(keys, values, threshold, queries):
    """The hand-built memory's output from its definition: relu((q·k - t)/(1 - t)) times the values."""
    return np.maximum((queries @ keys.T - threshold) / (1 - threshold), 0) @ values


def recalled(outputs, values):
    """Share of rows whose output has its largest cosine with its own (unit) value; zero outputs miss."""
    hit = np.argmax(outputs @ values.T, axis=1) == np.arange(len(values))
    return float(np.mean(hit & (np.linalg.norm(outputs, axis=1) > 0)))


def linear_recalls(n, noise):
    """Per seed: recall of the FFN, least squares, least squares fitted for the noise and correlation."""
    rows = []
    for seed in SEEDS:
        keys, values = memory.random_memories(n, D_MODEL, seed=seed)
        queries = memory.noisy_queries(keys, noise, seed=seed + 1)
        exact, *_ = np.linalg.lstsq(keys, values, rcond=None)
        ridge = np.sqrt(n * noise**2 / D_MODEL)
        fitted, *_ = np.linalg.lstsq(
            np.vstack([keys, ridge * np.eye(D_MODEL)]), np.vstack([values, np.zeros((D_MODEL, D_MODEL))]), rcond=None
        )
        rows.append(
            {
                "ffn": recalled(ffn_output(keys, values, THRESHOLD, queries), values),
                "ls": recalled(queries @ exact, values),
                "fitted": recalled(queries @ fitted, values),
                "corr": recalled(queries @ keys.T @ values, values),
            }
        )
    return rows


def test_linear_memory_recall_numbers(site):
    assert glued(site, PAGE, "kv_seeds") == len(SEEDS)
    for n, suffix in ((512, "most"), (1024, "double")):
        rows = linear_recalls(n, 0.0)
        for key in ("ffn", "ls", "corr"):
            per_seed = [r[key] for r in rows]
            assert glued(site, PAGE, f"kv_{key}_recall_{suffix}") == pytest.approx(np.mean(per_seed), abs=1e-12)
            if suffix == "most":
                assert glued(site, PAGE, f"kv_{key}_recall_most_low") == min(per_seed)
                assert glued(site, PAGE, f"kv_{key}_recall_most_high") == max(per_seed)
    assert glued(site, PAGE, "kv_double") == 1024
    # The sentences: FFN all in every set; least squares nearly all, correlation most, neither all.
    assert glued(site, PAGE, "kv_ffn_recall_most_low") == 1.0 == glued(site, PAGE, "kv_ffn_recall_double")
    assert 0.95 < glued(site, PAGE, "kv_ls_recall_most_low") <= glued(site, PAGE, "kv_ls_recall_most_high") < 1
    assert glued(site, PAGE, "kv_corr_recall_most_high") < 1
    assert glued(site, PAGE, "kv_ls_recall_double") < 0.9 and glued(site, PAGE, "kv_corr_recall_double") < 0.9


def test_linear_memory_noise_numbers(site):
    assert glued(site, PAGE, "kv_unit_noise") == 1.0
    rows = linear_recalls(512, 1.0)
    assert glued(site, PAGE, "kv_ffn_recall_unit_noise") == min(r["ffn"] for r in rows) == 1.0
    assert glued(site, PAGE, "kv_noise_fit_recall_unit_noise") == pytest.approx(np.mean([r["fitted"] for r in rows]))
    best = max(r[k] for r in rows for k in ("ls", "fitted", "corr"))
    assert glued(site, PAGE, "kv_best_linear_unit_noise") == best < 1.0


def test_exactness_and_size_numbers(site):
    keys, values = memory.random_memories(512, D_MODEL, seed=0)
    out = ffn_output(keys, values, THRESHOLD, keys)
    assert glued(site, PAGE, "kv_most_exact_error") == pytest.approx(float(np.abs(out - values).max()), abs=1e-15)
    exact, *_ = np.linalg.lstsq(keys, values, rcond=None)
    ls_out = keys @ exact
    cosine = np.mean(np.sum(ls_out * values, axis=1) / np.linalg.norm(ls_out, axis=1))
    assert glued(site, PAGE, "kv_ls_cosine") == pytest.approx(cosine, abs=1e-9)
    assert glued(site, PAGE, "kv_ffn_cosine") == pytest.approx(1.0, abs=1e-12)
    assert glued(site, PAGE, "kv_ffn_weights") == 2 * 512 * D_MODEL
    assert glued(site, PAGE, "kv_linear_weights") == D_MODEL**2


# --- ROME's covariance-weighted edit ---------------------------------------------------------------

LOW_THRESHOLD = 0.05


def hidden_of(keys, threshold, x):
    return np.maximum((x @ keys.T - threshold) / (1 - threshold), 0)


def kkt_change(covered_hidden, h_star, residual):
    """ΔW2 minimising the covered inputs' squared output change with h* ΔW2 = residual (KKT system)."""
    d_ff = h_star.size
    C = covered_hidden.T @ covered_hidden
    kkt = np.block([[2 * C, h_star[:, None]], [h_star[None, :], np.zeros((1, 1))]])
    rhs = np.vstack([np.zeros((d_ff, residual.size)), residual[None, :]])
    return np.linalg.solve(kkt, rhs)[:d_ff]


def test_covariance_edit_numbers(site, memories):
    keys, values = memories
    new_value = memory.random_memories(1, D_MODEL, seed=99).values[0]
    H = hidden_of(keys, LOW_THRESHOLD, keys)
    residual = new_value - H[SLOT] @ values
    delta = kkt_change(H, H[SLOT], residual)
    changes = np.linalg.norm(np.delete(H @ delta, SLOT, axis=0), axis=1)
    assert changes.max() < 1e-12 and np.abs(H[SLOT] @ delta - residual).max() < 1e-12
    assert glued(site, PAGE, "kv_rome_change") < 1e-12 and glued(site, PAGE, "kv_rome_error") < 1e-12
    assert glued(site, PAGE, "kv_rome_recalled") == 1.0
    assert glued(site, PAGE, "kv_others") == N_MEMORIES - 1
    assert glued(site, PAGE, "kv_hidden_rank") == np.linalg.matrix_rank(H) == N_MEMORIES
    assert glued(site, PAGE, "kv_edit_seeds") == 5
    # Every slot of five memories: the hat matrix H C⁻¹ Hᵀ is the identity, so ROME's edit moves no
    # other stored output; the minimum-norm edit moves output j by |h_j·h_s| / (h_s·h_s) times the residual.
    least = np.inf
    for seed in range(5):
        k, v = memory.random_memories(N_MEMORIES, D_MODEL, seed=seed)
        H = hidden_of(k, LOW_THRESHOLD, k)
        hat = H @ np.linalg.solve(H.T @ H, H.T)
        assert np.abs(hat - np.eye(N_MEMORIES)).max() < 1e-10
        gram = H @ H.T
        lengths = np.linalg.norm(new_value - H @ v, axis=1)
        spill = np.abs(gram) / np.diag(gram)[None, :] * lengths[None, :]
        np.fill_diagonal(spill, 0.0)
        least = min(least, spill.max(axis=0).min())
    assert glued(site, PAGE, "kv_rome_worst") < 1e-12
    assert glued(site, PAGE, "kv_min_norm_least") == pytest.approx(least, rel=1e-9)
    assert glued(site, PAGE, "kv_min_norm_least") > 0.1


def test_statistics_numbers(site):
    sizes = [8, 16, 32, 48, 64, 65, 72, 96, 128, 256, 512]
    new_value = memory.random_memories(1, D_MODEL, seed=99).values[0]
    assert glued(site, PAGE, "kv_d_ff") == N_MEMORIES
    assert (
        glued(site, PAGE, "kv_stats_fewest"),
        glued(site, PAGE, "kv_stats_one_more"),
        glued(site, PAGE, "kv_stats_most"),
    ) == (8, 65, 512)
    unseen_all = []
    for seed in range(5):
        keys, values = memory.random_memories(N_MEMORIES, D_MODEL, seed=seed)
        # The extra and unseen inputs: random unit vectors from the generator seeded [0, 1].
        extra = np.random.default_rng([0, 1]).standard_normal((512 - N_MEMORIES + 256, D_MODEL))
        extra /= np.linalg.norm(extra, axis=1, keepdims=True)
        extra, unseen = extra[:-256], extra[-256:]
        h = lambda x: hidden_of(keys, LOW_THRESHOLD, x)  # noqa: E731
        residual = new_value - h(keys[SLOT]) @ values
        order = [SLOT] + [i for i in range(N_MEMORIES) if i != SLOT]
        for m in sizes:
            covered = keys[order[:m]] if m <= N_MEMORIES else np.vstack([keys[order], extra[: m - N_MEMORIES]])
            # Below 64 inputs C is singular: the pseudo-inverse gives the same optimum.
            u = np.linalg.pinv(h(covered).T @ h(covered)) @ h(keys[SLOT])
            delta = np.outer(u, residual) / (u @ h(keys[SLOT]))
            change = lambda x: np.linalg.norm(h(x) @ delta, axis=1)  # noqa: E731
            unseen_all.append(change(unseen).max())
            if seed == 0 and m == 8:
                assert glued(site, PAGE, "kv_stats_fewest_outside") == pytest.approx(
                    change(keys[order[8:]]).max(), rel=1e-8
                )
            if seed == 0 and m in (65, 512):
                expected = np.linalg.norm(
                    h(covered[1:]) @ kkt_change(h(covered), h(keys[SLOT]), residual), axis=1
                ).max()
                key = "kv_stats_one_more_change" if m == 65 else "kv_stats_most_change"
                assert glued(site, PAGE, key) == pytest.approx(expected, rel=1e-6)
            if seed == 0 and m == 512:
                # ROME's summed squared spill over the protected inputs against the minimum-norm
                # edit's (delta along h* itself), on the same inputs: the least-squares optimum.
                rome_total = np.sum(np.linalg.norm(h(covered[1:]) @ delta, axis=1) ** 2)
                hs = h(keys[SLOT])
                plain = np.outer(hs, residual) / (hs @ hs)
                plain_total = np.sum(np.linalg.norm(h(covered[1:]) @ plain, axis=1) ** 2)
                share = glued(site, PAGE, "kv_stats_most_total_share")
                assert share == pytest.approx(rome_total / plain_total, rel=1e-6) and share < 1
    assert glued(site, PAGE, "kv_stats_unseen_low") == pytest.approx(min(unseen_all), rel=1e-8)
    assert glued(site, PAGE, "kv_stats_unseen_high") == pytest.approx(max(unseen_all), rel=1e-8)
    assert glued(site, PAGE, "kv_stats_one_more_change") > 1e-3  # "no edit of W2 avoids spill"
    assert glued(site, PAGE, "kv_stats_one_more_change") < glued(site, PAGE, "kv_stats_most_change")
    assert glued(site, PAGE, "kv_stats_fewest_outside") > 0.1


def test_product_key_numbers(site):
    # 64 sub-keys of each half: 64² keys; the fast lookup scores 2·64 half-keys, the full one 64².
    assert glued(site, PAGE, "kv_pk_sub_keys") == 64 and glued(site, PAGE, "kv_pk_slots") == 64**2
    assert glued(site, PAGE, "kv_pk_scored_fast") == 2 * 64 and glued(site, PAGE, "kv_pk_scored_full") == 64**2
    assert (glued(site, PAGE, "kv_pk_k"), glued(site, PAGE, "kv_pk_queries")) == (8, 20)


def test_memory_layer_cost_numbers(site):
    # 512² slots of width 1024, 32 read per token, keys 512 wide, counted again here:
    n, d_key, d, k = 512, 512, 1024, 32
    params = n * n * d + 2 * n * (d_key // 2) + d * d_key
    flops = 2 * d * d_key + 2 * (2 * n) * (d_key // 2) + k * k + 2 * k * d
    dense_params, dense_flops = 2 * n * n * d, 2 * 2 * n * n * d
    assert glued(site, PAGE, "kv_ml_slots") == n * n
    assert (glued(site, PAGE, "kv_ml_d_model"), glued(site, PAGE, "kv_ml_k")) == (d, k)
    assert (glued(site, PAGE, "kv_ml_params"), glued(site, PAGE, "kv_ml_flops")) == (params, flops)
    assert (glued(site, PAGE, "kv_ml_dense_params"), glued(site, PAGE, "kv_ml_dense_flops")) == (
        dense_params,
        dense_flops,
    )
    assert glued(site, PAGE, "kv_ml_flops_ratio") == pytest.approx(dense_flops / flops)
    # The papers' abstracts: Lample et al. (2019) 12 against 24 layers; Berges et al. (2025) up to
    # 128B memory parameters, 1 trillion tokens, base models up to 8B, dense models with more than
    # twice the compute; He (2024) over a million experts.
    assert (glued(site, PAGE, "kv_ml_lample_layers"), glued(site, PAGE, "kv_ml_lample_baseline")) == (12, 24)
    assert glued(site, PAGE, "kv_ml_berges_memory_billions") == 128
    assert glued(site, PAGE, "kv_ml_berges_tokens_trillions") == 1
    assert glued(site, PAGE, "kv_ml_berges_base_billions") == 8
    assert glued(site, PAGE, "kv_ml_berges_compute_ratio") == 2
    assert glued(site, PAGE, "kv_ml_peer_experts") == 1_000_000


def test_capacity_numbers(site):
    # Allen-Zhu and Li (2025): 2 bits per parameter with 1000 exposures, about 1 with 100.
    assert (glued(site, PAGE, "kv_cap_bits"), glued(site, PAGE, "kv_cap_exposures")) == (2, 1000)
    assert (glued(site, PAGE, "kv_cap_few_bits"), glued(site, PAGE, "kv_cap_few_exposures")) == (1, 100)
    # GPT-2 small: 124,439,808 parameters (OpenAI's README calls it 124M), 12 blocks of 3072 keys.
    assert glued(site, PAGE, "kv_cap_params") == 124_439_808
    assert glued(site, PAGE, "kv_cap_keys") == 12 * 3072
    assert (glued(site, PAGE, "kv_cap_objects"), glued(site, PAGE, "kv_cap_fact_bits")) == (32, 5)
    assert glued(site, PAGE, "kv_cap_facts") == 2 * 124_439_808 / 5
    assert glued(site, PAGE, "kv_cap_facts_per_key") == pytest.approx(2 * 124_439_808 / 5 / (12 * 3072))
