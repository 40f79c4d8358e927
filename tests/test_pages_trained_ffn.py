"""The trained-FFN page shows what a fresh training run computes, value by value (looked up by glue key).

The page's model is trained again here with the page's settings; training is
deterministic (seeded, deterministic algorithms, one thread), so every glued
number must come out exactly the same.
"""

from __future__ import annotations

import pytest
from sitecheck import PAGES_WITH_MEASURED_TIMES, figures, glued

from ffnbook import facts, memory
from ffnbook import tiny_transformer as tt
from ffnbook import trained_ffn as tf

PAGE = "trained-ffn"
SEQ_LEN, N_CONTEXTS = 8, 4


@pytest.fixture(scope="module")
def rerun():
    """The page's world, training run and probe prompts, recomputed in this process."""
    with tt.deterministic_torch(seed=0, threads=1):
        yield _train_as_the_page_does()


def _train_as_the_page_does():
    world = facts.make_world(16, 16, 32, n_filler=16, seed=0)
    split = facts.split_facts(world, 32, seed=0)
    config = tt.ModelConfig(vocab_size=world.vocab_size, seq_len=SEQ_LEN, d_model=32, n_heads=4, d_ff=128,
                            n_blocks=2)
    settings = tt.TrainConfig(steps=500, batch_size=128, learning_rate=5e-3, eval_every=25, eval_contexts=2,
                              seed=0)
    run = tt.train_on_facts(world, split.train, config, settings, held_out_facts=split.held_out)
    probe = facts.fact_prompts(world, split.train, N_CONTEXTS, SEQ_LEN, seed=7)
    return world, split, run, probe


def test_the_page_is_not_allowed_to_differ_between_builds():
    assert PAGE not in PAGES_WITH_MEASURED_TIMES


def test_world_numbers(site, rerun):
    world, split, _, _ = rerun
    assert glued(site, PAGE, "tr_n_facts") == world.n_facts == 256
    assert glued(site, PAGE, "tr_n_train") + glued(site, PAGE, "tr_n_held_out") == world.n_facts
    assert glued(site, PAGE, "tr_chance") == 1 / world.n_objects


def test_training_numbers(site, rerun):
    _, _, run, _ = rerun
    h = run.history
    assert glued(site, PAGE, "tr_final_loss") == h["loss"][-1]
    assert glued(site, PAGE, "tr_final_recall") == h["recall"][-1]
    assert glued(site, PAGE, "tr_held_out_recall") == h["held_out_recall"][-1]
    assert glued(site, PAGE, "tr_all_recalled_step") == tt.first_step_reaching(h, "recall", 1.0)
    n_params = sum(p.numel() for p in run.model.parameters())
    assert glued(site, PAGE, "tr_n_params") == n_params
    # Two FFNs of width 128 on d_model 32: weights and biases of both linear layers.
    assert glued(site, PAGE, "tr_n_ffn_params") == 2 * (2 * 32 * 128 + 128 + 32)


def test_ablation_numbers(site, rerun):
    world, _, run, probe = rerun
    rows = tf.ablation_study(run.model, world, probe)
    assert glued(site, PAGE, "tr_intact") == tf.ablated_recall(rows, "none")
    for b in (0, 1):
        for method in ("zero", "mean"):
            assert glued(site, PAGE, f"tr_ffn{b}_{method}") == tf.ablated_recall(rows, "ffn", (b,), method)
            assert glued(site, PAGE, f"tr_attn{b}_{method}") == tf.ablated_recall(rows, "attention", (b,), method)
    assert glued(site, PAGE, "tr_no_ffn_mean") == tf.ablated_recall(rows, "ffn", (0, 1), "mean")
    assert glued(site, PAGE, "tr_no_attention_zero") == tf.ablated_recall(rows, "attention", (0, 1), "zero")
    # What the prose claims: chance without attention, above chance without FFNs.
    chance = glued(site, PAGE, "tr_chance")
    assert glued(site, PAGE, "tr_no_attention_mean") < 2 * chance < glued(site, PAGE, "tr_no_ffn_mean")


def test_key_value_numbers(site, rerun):
    world, split, run, probe = rerun
    activations = tf.answer_activations(run.model, probe, N_CONTEXTS)
    answers = world.answers(split.train)
    for b in (0, 1):
        readings = tf.read_neurons(activations[b], split.train, answers, tf.value_logits(run.model, b),
                                   world.object_tokens(), block=b)
        for kind, n in tf.kind_counts(readings).items():
            assert glued(site, PAGE, f"tr_kind{b}_{kind}") == n
        assert glued(site, PAGE, f"tr_polysemantic{b}") == tf.polysemantic_count(readings)
        summary = tf.firing_summary(activations[b])
        assert glued(site, PAGE, f"tr_facts_per_unit{b}") == summary.facts_per_unit
        assert glued(site, PAGE, f"tr_units_per_fact{b}") == summary.units_per_fact
        assert glued(site, PAGE, f"tr_direct{b}") == tf.ffn_direct_recall(run.model, world, probe, b)
    stored = memory.random_memories(64, 128, seed=0)
    assert glued(site, PAGE, "tr_hand_units_per_fact") == 1.0  # one unit per stored pair, by construction
    assert tf.firing_summary(memory.retrieve(memory.build_memory_ffn(*stored), stored.keys).hidden).units_per_fact == 1.0


def test_sparsity_and_position_numbers(site, rerun):
    _, _, run, probe = rerun
    for b, (init, trained) in enumerate(zip(tt.active_share(run.initial_model, probe, answer_only=True),
                                            tt.active_share(run.model, probe, answer_only=True))):
        assert glued(site, PAGE, f"tr_active_init_answer{b}") == init
        assert glued(site, PAGE, f"tr_active_trained_answer{b}") == trained < init
    reshape = [tf.reshape_diffs(run.model, probe, b) for b in (0, 1)]
    assert glued(site, PAGE, "tr_reshape_ffn_numpy") == max(r["ffn_numpy"] for r in reshape)
    assert glued(site, PAGE, "tr_reshape_attention") == min(r["attention"] for r in reshape)
    look = tf.attention_share_on_fact(run.model, probe)
    assert [glued(site, PAGE, "tr_look0"), glued(site, PAGE, "tr_look1")] == look
    assert glued(site, PAGE, "tr_uniform_share") == 2 / SEQ_LEN


def test_one_capacity_point(site):
    """The narrowest FFN on the smallest world, trained again with the page's sweep settings."""
    settings = tt.TrainConfig(steps=400, batch_size=128, learning_rate=5e-3, eval_every=400, eval_contexts=2,
                              seed=0)
    with tt.deterministic_torch(seed=0, threads=1):
        rows = tf.capacity_sweep((8,), (16,), n_relations=16, n_objects=32, d_model=32, n_heads=4, n_blocks=1,
                                 seq_len=SEQ_LEN, train_config=settings)
    assert glued(site, PAGE, "tr_cap_smallest") == rows[0]["n_facts"] == 256
    assert glued(site, PAGE, "tr_cap_narrow_smallest") == rows[0]["recall"]


def test_figures_have_alt_text_computed_with_them(site):
    imgs = figures(site, PAGE)
    assert len(imgs) == 5
    alts = [img.get("alt", "") for img in imgs]
    assert all(len(alt.strip()) > 80 for alt in alts)
    # The ablation chart's alt text reads the same recall the prose shows.
    assert any(f"intact model: {100 * glued(site, PAGE, 'tr_intact'):.0f}%" in alt for alt in alts)
    assert any(f"{glued(site, PAGE, 'tr_cap_narrow_largest'):.0%} of {glued(site, PAGE, 'tr_cap_largest')}" in alt
               for alt in alts)
