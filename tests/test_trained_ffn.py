"""Measurements on a trained tiny transformer, checked on cases whose answer is known by hand."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ffnbook import facts, memory
from ffnbook import tiny_transformer as tt
from ffnbook import trained_ffn as tf
from ffnbook.plotting import BookFigure

SEQ_LEN = 6

# One deterministic torch thread for every test (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("deterministic_torch_thread")


@pytest.fixture
def world() -> facts.FactWorld:
    return facts.make_world(5, 4, 6, n_filler=4, seed=1)


@pytest.fixture
def model(world) -> tt.TinyTransformer:
    torch.manual_seed(0)
    config = tt.ModelConfig(vocab_size=world.vocab_size, seq_len=SEQ_LEN, d_model=16, n_heads=2, d_ff=24,
                            n_blocks=2)
    return tt.TinyTransformer(config).eval()


@pytest.fixture
def prompts(world):
    return facts.fact_prompts(world, world.all_facts(), 2, SEQ_LEN, seed=4)


# --- ablation ----------------------------------------------------------------------------------

def test_ablation_rows_cover_every_condition(model, world, prompts):
    rows = tf.ablation_study(model, world, prompts)
    keys = {(r["part"], r["blocks"], r["method"]) for r in rows}
    assert ("none", (), "none") in keys
    for part in ("ffn", "attention"):
        for method in ("zero", "mean"):
            assert {(part, (0,), method), (part, (1,), method), (part, (0, 1), method)} <= keys
    assert len(rows) == 13
    assert tf.ablated_recall(rows, "none") == tt.recall(model, world, prompts)
    with pytest.raises(ValueError, match="no ablation row"):
        tf.ablated_recall(rows, "ffn", (2,), "zero")


def test_ablating_a_silent_sublayer_changes_nothing(model, world, prompts):
    """An FFN whose output is exactly zero: both ablations leave recall as it was."""
    with torch.no_grad():
        for b in model.blocks:
            b.ffn.down.weight.zero_()
            b.ffn.down.bias.zero_()
    rows = tf.ablation_study(model, world, prompts)
    intact = tf.ablated_recall(rows, "none")
    assert all(r["recall"] == intact for r in rows if r["part"] == "ffn")


def test_removing_all_attention_leaves_the_answer_blind_to_the_fact(model, world, prompts):
    """Without attention the → position sees only itself: every prompt gets the same guess."""
    with torch.no_grad():
        logits = tt.answer_logits(model, prompts, attention_ablation={0: "zero", 1: "zero"})
    guesses = tt.guessed_objects(logits, world)
    assert len(set(guesses.tolist())) == 1
    share = float(np.mean(prompts.answers == guesses[0]))
    rows = tf.ablation_study(model, world, prompts)
    assert tf.ablated_recall(rows, "attention", (0, 1), "zero") == share


def test_mean_outputs_are_per_position_averages(model, prompts):
    means = tf.mean_outputs(model, prompts)
    with torch.no_grad():
        trace = model.trace(prompts.tokens)
    assert means["ffn"][1].shape == (SEQ_LEN, 16)
    assert torch.allclose(means["attention"][0][3], trace.attention_outputs[0][:, 3].mean(dim=0))


# --- the key–value reading ----------------------------------------------------------------------

def hand_made_reading():
    """Six units over six facts, one of every kind, with activations and values chosen by hand.

    Facts (subject, relation) → answer: (0,0)→0, (0,1)→1, (1,0)→1, (1,1)→2, (2,0)→0, (2,1)→2.
    Tokens 0..2 are the objects; token 3 is something else.
    """
    facts_ = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [2, 0], [2, 1]])
    answers = np.array([0, 1, 1, 2, 0, 2])
    acts = np.zeros((6, 6))
    acts[[0, 4], 0] = [2.0, 1.5]       # unit 0: facts with answer 0, value promotes object 0 → memory
    acts[[0, 1], 1] = [1.0, 0.9]       # unit 1: subject 0, answers 0 and 1 → subject
    acts[[1, 3, 5], 2] = [1.0, 1.0, 0.2]  # unit 2: relation 1 (0.2 is below half the peak), answers 1, 2 → relation
    acts[[0, 3], 3] = [1.0, 1.0]       # unit 3: different subject, relation and answer → mixed
    acts[:, 4] = -1.0                  # unit 4: never positive → dead
    acts[[2], 5] = [3.0]               # unit 5: one fact (answer 1) but its value promotes token 3 → mixed
    scores = np.zeros((6, 4))
    scores[0, 0] = 1.0
    scores[5, 3] = 1.0
    return acts, facts_, answers, scores, np.arange(3)


def test_read_neurons_labels_a_hand_made_case():
    acts, facts_, answers, scores, objects = hand_made_reading()
    readings = tf.read_neurons(acts, facts_, answers, scores, objects, block=1)
    assert [r.kind for r in readings] == ["memory", "subject", "relation", "mixed", "dead", "mixed"]
    assert readings[0].strong == (0, 4) and readings[0].n_answers == 1 and readings[0].promoted[0] == 0
    assert readings[2].strong == (1, 3)  # the weak fact 5 is left out
    assert readings[4].strong == () and readings[4].peak == -1.0
    assert all(r.block == 1 for r in readings)
    assert tf.kind_counts(readings) == {"dead": 1, "memory": 1, "subject": 1, "relation": 1, "mixed": 2}
    assert tf.polysemantic_count(readings) == 3  # units 1, 2 and 3
    picked = tf.pick_examples(readings)
    assert [(r.kind, r.neuron) for r in picked] == [("memory", 0), ("subject", 1), ("relation", 2), ("mixed", 5)]


def test_firing_summary_of_a_hand_made_case():
    acts, *_ = hand_made_reading()
    summary = tf.firing_summary(acts)
    # Strong facts per live unit: 2, 2, 2, 2, 1 → median 2; strong units per fact: 3, 2, 1, 2, 1, 0 → mean 1.5.
    assert summary == tf.FiringSummary(facts_per_unit=2.0, units_per_fact=1.5, live_units=5)


def test_the_hand_built_memory_is_one_unit_per_fact():
    stored = memory.random_memories(32, 64, seed=0)
    hidden = memory.retrieve(memory.build_memory_ffn(*stored), stored.keys).hidden
    assert tf.firing_summary(hidden) == tf.FiringSummary(1.0, 1.0, 32)


def test_value_logits_read_a_value_planted_on_a_token(model, world):
    """Unit 3's value is set to the centred unembedding row of o2: o2 is what it promotes most."""
    target = int(world.object_token(2))
    with torch.no_grad():
        row = model.unembed.weight[target]
        model.blocks[1].ffn.down.weight[:, 3] = 10 * (row - row.mean())
    scores = tf.value_logits(model, 1)
    assert scores.shape == (24, world.vocab_size)
    assert int(np.argmax(scores[3])) == target
    # Adding a constant to a value changes nothing: the final layer norm removes it.
    with torch.no_grad():
        model.blocks[1].ffn.down.weight[:, 3] += 5.0
    assert np.allclose(tf.value_logits(model, 1)[3], scores[3])


def test_answer_activations_average_over_contexts(model, world, prompts):
    acts = tf.answer_activations(model, prompts, 2)
    with torch.no_grad():
        hidden = model.trace(prompts.tokens).ffn_hidden[0][:, -1, :].double().numpy()
    assert acts[0].shape == (world.n_facts, 24)
    assert np.allclose(acts[0][3], hidden[6:8].mean(axis=0))
    with pytest.raises(ValueError, match="grouped fact by fact"):
        tf.answer_activations(model, prompts, 4)


def test_direct_recall_of_a_silent_ffn_is_the_share_of_the_first_object(model, world, prompts):
    """An FFN that writes zero scores every object zero; the first object wins every tie."""
    with torch.no_grad():
        model.blocks[0].ffn.down.weight.zero_()
        model.blocks[0].ffn.down.bias.zero_()
    expected = float(np.mean(prompts.answers == world.object_token(0)))
    assert tf.ffn_direct_recall(model, world, prompts, 0) == expected


# --- position independence and attention -------------------------------------------------------

def test_uniform_attention_puts_two_over_seq_len_on_the_fact(model, world, prompts):
    """With query and key weights zero every score is equal: the last position spreads evenly."""
    with torch.no_grad():
        for b in model.blocks:
            b.attention.q.weight.zero_()
            b.attention.k.weight.zero_()
    even = tf.uniform_share_on_fact(SEQ_LEN)
    assert even == 2 / SEQ_LEN  # two of the SEQ_LEN positions the last one sees carry the fact
    assert tf.attention_share_on_fact(model, prompts) == pytest.approx([even] * 2, abs=1e-6)
    with pytest.raises(ValueError, match="seq_len >= 3"):
        tf.uniform_share_on_fact(2)


def test_reshape_test_on_a_model(model, prompts):
    diffs = tf.reshape_diffs(model, prompts, 1)
    assert diffs["ffn"] < 1e-12 and diffs["ffn_numpy"] < 1e-4 and diffs["attention"] > 1e-3


def test_influence_of_the_ffn_is_diagonal_and_attention_is_causal(model, prompts):
    m = tf.influence_matrices(model, prompts, 0, index=2)
    off = ~np.eye(SEQ_LEN, dtype=bool)
    assert np.all(m["ffn"][off] == 0) and np.all(np.diag(m["ffn"]) > 0)
    assert np.all(m["attention"][np.triu_indices(SEQ_LEN, 1)] == 0)
    assert np.any(m["attention"][np.tril_indices(SEQ_LEN, -1)] > 0)


# --- capacity and figures -----------------------------------------------------------------------

def test_capacity_sweep_rows(world):
    rows = tf.capacity_sweep((4, 8), (2,), n_relations=3, n_objects=4, d_model=8, n_heads=2, n_blocks=1,
                             seq_len=4, train_config=tt.TrainConfig(steps=5, batch_size=8, eval_every=5))
    assert [(r["d_ff"], r["n_facts"]) for r in rows] == [(4, 6), (8, 6)]
    assert all(0.0 <= r["recall"] <= 1.0 for r in rows)


def test_figures_are_book_figures_whose_alt_text_reads_the_data(model, world, prompts):
    rows = tf.ablation_study(model, world, prompts)
    chance = tf.chance_recall(world)
    assert chance == 1 / 6
    acts = tf.answer_activations(model, prompts, 2)
    readings = tf.read_neurons(acts[0], world.all_facts(), world.answers(world.all_facts()),
                               tf.value_logits(model, 0), world.object_tokens())
    history = {"step": [0, 10], "loss": [None, 1.25], "recall": [0.1, 0.75], "held_out_recall": [0.0, 0.25],
               "active_share": [[0.5, 0.4], [0.5, 0.45]]}
    ablation = tf.ablation_figure(rows, chance)
    neurons = tf.neuron_figure(world, world.all_facts(), acts, readings[:2])
    influence = tf.influence_figure(world, prompts, tf.influence_matrices(model, prompts, 0))
    training = tf.training_figure(history, chance)
    capacity = tf.capacity_figure([{"d_ff": 4, "n_facts": 6, "recall": 0.5},
                                   {"d_ff": 4, "n_facts": 12, "recall": 0.25}], chance, 8)
    for fig in (ablation, neurons, influence, training, capacity):
        assert isinstance(fig, BookFigure) and fig.to_svg().startswith("<?xml")
    intact = tf.ablated_recall(rows, "none")
    assert f"intact model: {100 * intact:.0f}%" in ablation.description and "16.7%" in ablation.description
    assert f"unit {readings[1].neuron} ({readings[1].kind})" in neurons.description
    assert "from 1.25 to 1.2500" in training.description and "from 10% to 75%" in training.description
    assert "block 0 from 50% to 40%" in training.description
    assert "d_ff = 4: 50% of 6, 25% of 12" in capacity.description
    assert world.token_names()[int(prompts.tokens[0, 0])] in influence.description
    table = tf.neuron_table(world, world.all_facts(), readings[:2])._repr_markdown_()
    assert table.count("\n") == 3
