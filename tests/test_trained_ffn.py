"""Measurements on a trained tiny transformer, checked on cases whose answer is known by hand."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from ffnbook import controls, facts, memory
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
    config = tt.ModelConfig(vocab_size=world.vocab_size, seq_len=SEQ_LEN, d_model=16, n_heads=2, d_ff=24, n_blocks=2)
    return tt.TinyTransformer(config).eval()


@pytest.fixture
def prompts(world):
    return facts.fact_prompts(world, world.all_facts(), 2, SEQ_LEN, seed=4)


# --- ablation and patching, position by position ----------------------------------------------


def test_position_classes_by_hand(world, prompts):
    classes = tf.position_classes(prompts)
    names = [[tf.POSITION_CLASSES[c] for c in row] for row in classes]
    for i, row in enumerate(names):
        assert row[prompts.subject_position[i]] == "subject" and row[prompts.relation_position[i]] == "relation"
        assert row[-1] == "query" and row.count("filler") == SEQ_LEN - 3
    assert tf._site_mask(prompts, "all").all()
    assert torch.equal(tf._site_mask(prompts, "query")[:, -1], torch.ones(len(prompts.tokens), dtype=torch.bool))
    with pytest.raises(ValueError, match="where must be one of"):
        tf._site_mask(prompts, "object")


def test_class_means_by_brute_force(prompts):
    classes = tf.position_classes(prompts)
    outputs = torch.randn(
        len(prompts.tokens), SEQ_LEN, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0)
    )
    means = tf._class_means(outputs, classes)
    for i in range(len(outputs)):
        for t in range(SEQ_LEN):
            same = [j for j in range(len(outputs)) if classes[j, t] == classes[i, t]]
            assert torch.allclose(means[i, t], outputs[same, t].mean(dim=0))


def test_ablation_rows_cover_every_condition(model, world, prompts):
    rows = tf.ablation_study(model, world, prompts)
    keys = {(r["part"], r["blocks"], r["method"], r["where"]) for r in rows}
    for part in ("ffn", "attention"):
        for method in ("zero", "mean"):
            for where in tf.ABLATION_SITES:
                assert {(part, (0,), method, where), (part, (1,), method, where)} <= keys
            assert (part, (0, 1), method, "all") in keys
    assert len(rows) == 1 + 2 * 2 * (2 * len(tf.ABLATION_SITES) + 1)
    assert tf.ablated_recall(rows, "none") == tt.recall(model, world, prompts)
    with pytest.raises(ValueError, match="no ablation row"):
        tf.ablated_recall(rows, "ffn", (2,), "zero")


def test_ablating_a_silent_sublayer_changes_nothing(model, world, prompts):
    """An FFN whose output is exactly zero: both ablations, at every site, leave recall as it was."""
    with torch.no_grad():
        for b in model.blocks:
            b.ffn.down.weight.zero_()
            b.ffn.down.bias.zero_()
    rows = tf.ablation_study(model, world, prompts)
    intact = tf.ablated_recall(rows, "none")
    assert all(r["recall"] == intact for r in rows if r["part"] == "ffn")


def test_a_site_ablation_equals_a_hand_made_replacement(model, world, prompts):
    """Zero ablation of block 1's FFN at the subject tokens, rebuilt by zeroing those outputs by hand."""
    rows = tf.ablation_study(model, world, prompts)
    with torch.no_grad():
        out = model.trace(prompts.tokens).ffn_outputs[1].clone()
    out[np.arange(len(out)), prompts.subject_position] = 0.0
    assert tf.ablated_recall(rows, "ffn", (1,), "zero", "subject") == tt.recall(
        model, world, prompts, ffn_ablation={1: out}
    )


def test_removing_all_attention_leaves_the_answer_blind_to_the_fact(model, world, prompts):
    """Without attention the → position sees only itself: every prompt gets the same guess."""
    with torch.no_grad():
        logits = tt.answer_logits(model, prompts, attention_ablation={0: "zero", 1: "zero"})
    guesses = tt.guessed_objects(logits, world)
    assert len(set(guesses.tolist())) == 1
    share = float(np.mean(prompts.answers == guesses[0]))
    rows = tf.ablation_study(model, world, prompts)
    assert tf.ablated_recall(rows, "attention", (0, 1), "zero") == share


def test_mean_outputs_are_class_means(model, prompts):
    means = tf.mean_outputs(model, prompts)
    with torch.no_grad():
        trace = model.trace(prompts.tokens)
    classes = tf.position_classes(prompts)
    assert means["ffn"][1].shape == (len(prompts.tokens), SEQ_LEN, 16)
    rows = classes[:, 3] == classes[0, 3]
    assert torch.allclose(
        means["attention"][0][0, 3], trace.attention_outputs[0][torch.from_numpy(rows), 3].mean(dim=0)
    )


def test_ablation_grid_and_its_cells():
    rows = [{"part": "none", "blocks": (), "method": "none", "where": "none", "recall": 1.0}]
    studies = []
    for offset in (0.0, 0.5):
        study = list(rows)
        for part in ("ffn", "attention"):
            for b in (0, 1):
                for where in tf.ABLATION_SITES:
                    study.append(
                        {
                            "part": part,
                            "blocks": (b,),
                            "method": "mean",
                            "where": where,
                            "recall": offset + 0.1 * b + (0.2 if part == "ffn" else 0.0),
                        }
                    )
        studies.append(study)
    grid = tf.ablation_grid(studies, "mean")
    assert grid["rows"] == [("ffn", 0), ("attention", 0), ("ffn", 1), ("attention", 1)]
    assert tf.grid_value(grid, "ffn", 1, "query") == pytest.approx(0.25 + 0.3)
    assert tf.grid_value(grid, "ffn", 1, "query", "low") == pytest.approx(0.3)
    assert tf.grid_value(grid, "attention", 0, "all", "high") == pytest.approx(0.5)
    with pytest.raises(ValueError, match="stat"):
        tf.grid_value(grid, "ffn", 0, "all", "median")


def test_patching_with_the_prompts_themselves_changes_nothing(model, world, prompts):
    rows = tf.patching_study(model, world, prompts, prompts)
    intact = tt.recall(model, world, prompts)
    assert all(r["kept"] == intact for r in rows)
    assert tf.patched(rows, "ffn", 1, "query", "kept") == intact


def test_patching_moves_what_the_donor_wrote(model, world, prompts):
    """Block 1's FFN output at → taken from donors, rebuilt by hand from the donors' own run."""
    donors = facts.swap_facts(world, prompts, facts.other_answer_facts(world, prompts.facts, seed=1))
    rows = tf.patching_study(model, world, prompts, donors, sites=("query",))
    with torch.no_grad():
        own = model.trace(prompts.tokens).ffn_outputs[1].clone()
        own[:, -1] = model.trace(donors.tokens).ffn_outputs[1][:, -1]
        guess = tt.guessed_objects(tt.answer_logits(model, prompts, ffn_ablation={1: own}), world)
    assert tf.patched(rows, "ffn", 1, "query") == float(np.mean(guess == donors.answers))
    assert tf.patched(rows, "ffn", 1, "query", "kept") == float(np.mean(guess == prompts.answers))
    shifted = facts.fact_prompts(world, world.all_facts(), 2, SEQ_LEN, seed=99)
    with pytest.raises(ValueError, match="positions"):
        tf.patching_study(model, world, prompts, shifted)


def test_held_out_hits_by_hand(model, world):
    held = world.all_facts()[:6]
    hits = tf.held_out_hits(model, world, held, n_contexts=3, seed=2)
    p = facts.fact_prompts(world, held, 3, SEQ_LEN, seed=2)
    with torch.no_grad():
        logits = model(p.tokens)[:, -1, :]
    objects = world.object_tokens()
    right = 0
    for i, fact in enumerate(held):
        scores = logits[3 * i : 3 * i + 3, objects].mean(dim=0)
        right += int(objects[int(scores.argmax())] == world.object_token(world.objects[fact[0], fact[1]]))
    assert hits == right


# --- the key–value reading ----------------------------------------------------------------------


def hand_made_reading():
    """Seven units over ten facts, every kind, with activations and values chosen by hand.

    Facts (subject, relation) → answer: (0,0)→0, (0,1)→1, (1,0)→1, (1,1)→2, (2,0)→0, (2,1)→2, and
    (3,0)→1, (3,1)→0, (4,0)→2, (4,1)→1, which drive no unit (so that four facts are a minority).
    Tokens 0..2 are the objects; token 3 is something else.
    """
    facts_ = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [2, 0], [2, 1], [3, 0], [3, 1], [4, 0], [4, 1]])
    answers = np.array([0, 1, 1, 2, 0, 2, 1, 0, 2, 1])
    acts = np.zeros((10, 7))
    acts[[0, 4], 0] = [2.0, 1.5]  # unit 0: facts with answer 0, value promotes object 0 → memory
    acts[[0, 1], 1] = [1.0, 0.9]  # unit 1: subject 0, answers 0 and 1 → subject
    acts[[1, 3, 5], 2] = [1.0, 1.0, 0.2]  # unit 2: relation 1 (0.2 is below half the peak), answers 1, 2 → relation
    acts[[0, 3], 3] = [1.0, 1.0]  # unit 3: two facts sharing no subject, relation or answer → distributed
    acts[:, 4] = -1.0  # unit 4: never positive → dead
    acts[[2], 5] = [3.0]  # unit 5: one fact (answer 1) but its value promotes token 3 → distributed
    acts[[0, 1, 2, 3], 6] = 1.0  # unit 6: all facts of subjects 0 and 1 (4 of 10), of no one subject → polysemantic
    scores = np.zeros((7, 4))
    scores[0, 0] = 1.0
    scores[5, 3] = 1.0
    return acts, facts_, answers, scores, np.arange(3)


def test_read_neurons_labels_a_hand_made_case():
    acts, facts_, answers, scores, objects = hand_made_reading()
    readings = tf.read_neurons(acts, facts_, answers, scores, objects, block=1)
    assert [r.kind for r in readings] == [
        "memory",
        "subject",
        "relation",
        "distributed",
        "dead",
        "distributed",
        "polysemantic",
    ]
    assert readings[0].strong == (0, 4) and readings[0].n_answers == 1 and readings[0].promoted[0] == 0
    assert readings[2].strong == (1, 3)  # the weak fact 5 is left out
    assert readings[4].strong == () and readings[4].peak == -1.0
    assert all(r.block == 1 for r in readings)
    assert tf.kind_counts(readings) == {
        "dead": 1,
        "memory": 1,
        "subject": 1,
        "relation": 1,
        "polysemantic": 1,
        "distributed": 2,
    }
    assert sum(r.n_answers > 1 for r in readings) == 4  # units 1, 2, 3 and 6
    picked = tf.pick_examples(readings)
    assert [(r.kind, r.neuron) for r in picked] == [
        ("memory", 0),
        ("subject", 1),
        ("relation", 2),
        ("polysemantic", 6),
        ("distributed", 5),
    ]


def test_the_test_for_unrelated_features_on_a_larger_grid():
    """On a 4 x 4 grid of facts: two whole subjects, a subject and a relation, scattered facts, one subject."""
    facts_ = np.array([[s, r] for s in range(4) for r in range(4)])
    index = {tuple(f): i for i, f in enumerate(facts_)}

    def explained(cells):
        return tf._explained_by_unrelated_features(facts_, np.array([index[c] for c in cells]))

    rows_0_and_2 = [(0, r) for r in range(4)] + [(2, r) for r in range(4)]
    assert explained(rows_0_and_2)
    assert tf._detected_features(facts_, np.array([index[c] for c in rows_0_and_2])) == [("subject", 0), ("subject", 2)]
    assert explained([(1, 0), (1, 1), (1, 2), (1, 3), (0, 3), (2, 3), (3, 3)])  # subject 1 and relation 3
    assert not explained([(0, 0), (0, 1), (2, 2), (2, 3)])  # only half of subject 0's facts and of subject 2's
    assert not explained([(0, 0), (1, 1), (2, 2), (3, 3)])  # no feature has half of its facts here
    assert not explained([(0, 0), (0, 1), (0, 2), (0, 3)])  # one subject explains them all
    assert not explained([(0, 0), (0, 1), (0, 2), (3, 3)])  # subject 0 is detected, nothing explains (3, 3)


def test_firing_summary_of_a_hand_made_case():
    acts, *_ = hand_made_reading()
    summary = tf.firing_summary(acts)
    # Strong facts per live unit: 2, 2, 2, 2, 1, 4 → median 2; strong units per fact: 4, 3, 2, 3, 1, 0 and
    # 0 for the four facts that drive no unit → mean 13/10.
    assert summary == tf.FiringSummary(facts_per_unit=2.0, units_per_fact=pytest.approx(13 / 10), live_units=6)


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
    at_subject = tf.answer_activations(model, prompts, 2, where="subject")
    with torch.no_grad():
        hidden1 = model.trace(prompts.tokens).ffn_hidden[1].double().numpy()
    rows = np.arange(6, 8)
    assert np.allclose(at_subject[1][3], hidden1[rows, prompts.subject_position[rows]].mean(axis=0))
    with pytest.raises(ValueError, match="grouped fact by fact"):
        tf.answer_activations(model, prompts, 4)
    with pytest.raises(ValueError, match="where must be one of .query., .subject., .relation."):
        tf.answer_activations(model, prompts, 2, where="filler")


def test_active_share_by_site_by_brute_force(model, prompts):
    shares = tf.active_share_by_site(model, prompts)
    with torch.no_grad():
        hidden = model.trace(prompts.tokens).ffn_hidden
    classes = tf.position_classes(prompts)
    for b, h in enumerate(hidden):
        on = (h > 0).numpy()
        for i, name in enumerate(tf.POSITION_CLASSES):
            tokens = [on[n, t] for n in range(len(on)) for t in range(SEQ_LEN) if classes[n, t] == i]
            assert shares[b][name] == pytest.approx(float(np.mean(tokens)))
        assert shares[b]["all"] == pytest.approx(float(on.mean()))


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


# The shape of the tiny worlds and models the capacity sweeps are tested on.
TINY_SWEEP = dict(n_relations=3, n_objects=4, d_model=8, n_heads=2, n_blocks=1, seq_len=4)


def test_capacity_sweep_rows_and_table():
    rows = tf.capacity_sweep(
        (0, 4, 8),
        (2,),
        **TINY_SWEEP,
        train_config=tt.TrainConfig(steps=5, batch_size=8, eval_every=5),
        seeds=(0, 1),
    )
    assert [(r["d_ff"], r["n_facts"], r["seed"]) for r in rows] == [(w, 6, s) for w in (0, 4, 8) for s in (0, 1)]
    config = tt.ModelConfig(
        vocab_size=facts.make_world(2, 3, 4, seed=0).vocab_size, seq_len=4, d_model=8, n_heads=2, d_ff=8, n_blocks=1
    )  # each row's trainable parameters, its FFN's only where it has one
    widths = {
        0: tt.parameter_count(config, ffn=False),
        4: tt.parameter_count(replace(config, d_ff=4)),
        8: tt.parameter_count(config),
    }
    assert [r["parameters"] for r in rows] == [widths[r["d_ff"]] for r in rows]
    assert all(np.isfinite(r["bits"]) and r["bits"] <= 6 * np.log2(4) for r in rows)  # at most the world's bits
    assert all(0.0 <= r["recall"] <= 1.0 and r["history"]["step"] == [0, 5] for r in rows)
    with pytest.raises(ValueError, match="widths"):
        tf.capacity_sweep(
            (-1,),
            (2,),
            n_relations=3,
            n_objects=4,
            d_model=8,
            n_heads=2,
            n_blocks=1,
            seq_len=4,
            train_config=tt.TrainConfig(steps=1, batch_size=2, eval_every=1),
        )


def test_capacity_table_compares_each_seed_with_its_own_control():
    rows = [
        {"d_ff": 0, "n_facts": 100, "seed": 0, "recall": 0.5},
        {"d_ff": 0, "n_facts": 100, "seed": 1, "recall": 0.3},
        {"d_ff": 10, "n_facts": 100, "seed": 0, "recall": 0.7},
        {"d_ff": 10, "n_facts": 100, "seed": 1, "recall": 0.7},
    ]
    table = tf.capacity_table(rows)
    assert table[(0, 100)]["gain_per_unit"] is None and table[(0, 100)]["mean"] == pytest.approx(0.4)
    # Seed 0 gains 0.2 * 100 / 10 = 2 facts per unit, seed 1 gains 0.4 * 100 / 10 = 4.
    assert table[(10, 100)]["gain_per_unit"] == pytest.approx(3.0)
    assert (table[(10, 100)]["gain_low"], table[(10, 100)]["gain_high"]) == (pytest.approx(2.0), pytest.approx(4.0))


def _history(recalls, losses):
    return {
        "step": list(range(0, 10 * len(recalls), 10)),
        "loss": [None] + losses,
        "recall": recalls,
        "held_out_recall": [0.0] * len(recalls),
        "active_share": [[0.5] * len(recalls)],
    }


def test_figures_are_book_figures_whose_alt_text_reads_the_data(model, world, prompts):
    rows = tf.ablation_study(model, world, prompts)
    chance = tf.chance_recall(world)
    assert chance == 1 / 6
    acts = tf.answer_activations(model, prompts, 2)
    readings = tf.read_neurons(
        acts[0], world.all_facts(), world.answers(world.all_facts()), tf.value_logits(model, 0), world.object_tokens()
    )
    run = tt.TrainResult(model, model, _history([0.1, 0.75, 1.0], [1.25, 0.5]), model.config, tt.TrainConfig())
    control = tt.TrainResult(model, model, _history([0.1, 0.5, 0.9], [1.5, 1.0]), model.config, tt.TrainConfig())
    ablation = tf.ablation_figure([rows, rows], chance)
    neurons = tf.neuron_figure(world, world.all_facts(), acts, readings[:3], where="subject")
    influence = tf.influence_figure(world, prompts, tf.influence_matrices(model, prompts, 0))
    training = tf.training_figure({"with FFNs": [run], "without FFNs": [control]}, chance)
    capacity_rows = [
        {
            "d_ff": w,
            "n_facts": 6,
            "seed": s,
            "recall": 0.25 + 0.25 * (w > 0) + 0.1 * s,
            "history": _history([0.1, 0.5], [2.0]),
        }
        for w in (0, 4)
        for s in (0, 1)
    ]
    capacity = tf.capacity_figure(capacity_rows, chance, 8)
    for fig in (ablation, neurons, influence, training, capacity):
        assert isinstance(fig, BookFigure) and fig.to_svg().startswith("<?xml")
    intact = tf.ablated_recall(rows, "none")
    assert f"The intact model recalls {100 * intact:.0f}%" in ablation.description
    ffn1_query = tf.ablated_recall(rows, "ffn", (1,), "mean", "query")
    assert "FFN 1: subject" in ablation.description and f"→ {100 * ffn1_query:.0f}%" in ablation.description
    assert f"unit {readings[1].neuron} ({readings[1].kind}, read at subject)" in neurons.description
    assert "with FFNs: loss from 1.25 to 0.500" in training.description
    assert "all of them first recalled at step 20" in training.description
    assert "without FFNs" in training.description and "at step never" in training.description
    half = 12.706205 * np.std([0.25, 0.35], ddof=1) / np.sqrt(2)  # t(0.975, 1 df): the bars are 95% intervals
    shown = f"d_ff 0: 30% ({100 * (0.30 - half):.0f} to {100 * (0.30 + half):.0f}); d_ff 4: 55% "
    assert shown in capacity.description.replace(", d_ff", "; d_ff")
    assert world.token_names()[int(prompts.tokens[0, 0])] in influence.description
    table = tf.neuron_table(world, world.all_facts(), readings[:2])._repr_markdown_()
    assert table.count("\n") == 3


def test_the_tables_read_their_rows(model, world, prompts):
    donors = facts.swap_facts(world, prompts, facts.other_answer_facts(world, prompts.facts, seed=0))
    patching = tf.patching_study(model, world, prompts, donors, sites=("query",))
    text = tf.patching_table([patching, patching], [("ffn", 1, "query")])._repr_markdown_()
    moved = tf.patched(patching, "ffn", 1, "query")
    assert f"| FFN 1 | → | {100 * moved:.0f}% |" in text  # the same in both seeds: no interval to show
    other = [{**row, "moved": row["moved"] + 0.1} for row in patching]
    text = tf.patching_table([patching, other], [("ffn", 1, "query")])._repr_markdown_()
    half = 12.706205 * np.std([moved, moved + 0.1], ddof=1) / np.sqrt(2)  # the 95% interval's half-width
    assert f"| FFN 1 | → | {100 * (moved + 0.05):.0f}% ± {100 * half:.0f} |" in text
    shares = tf.active_share_by_site(model, prompts)
    sparsity = tf.sparsity_table([shares], [shares])._repr_markdown_()
    q = shares[0]["query"]
    assert f"{100 * q:.0f} → {100 * q:.0f}" in sparsity
    acts = tf.answer_activations(model, prompts, 2)
    readings = tf.read_neurons(
        acts[1],
        world.all_facts(),
        world.answers(world.all_facts()),
        tf.value_logits(model, 1),
        world.object_tokens(),
        block=1,
    )
    kinds = tf.kind_table({(1, "query"): [readings, readings]})._repr_markdown_()
    assert kinds.startswith("| units read | dead | memory |") and "FFN 1 at →" in kinds
    both = tf.kind_table({(1, "query"): [readings, readings]}, {(1, "query"): [readings[:3], readings[:3]]})
    rows = both._repr_markdown_().splitlines()
    assert len(rows) == 4 and rows[3].startswith("| FFN 1 at →, at initialisation |")
    assert f"| {sum(r.kind == 'dead' for r in readings[:3]):.1f} |" in rows[3]


def test_unit_ablation_effect_by_hand(model, world, prompts):
    """Silencing one unit at → by hand (its weight column zeroed in a copy) loses what the function reports."""
    import copy

    effects = tf.unit_ablation_effect(model, world, prompts, 1, where="query")
    assert effects.shape == (model.config.d_ff,)
    intact = tt.recall(model, world, prompts)
    for unit in (0, int(np.argmax(effects))):
        twin = copy.deepcopy(model)
        with torch.no_grad():
            twin.blocks[1].ffn.down.weight[:, unit] = 0.0
        # Only → is scored, and block 1's output elsewhere is read by no later block: zeroing the
        # value column everywhere equals removing the unit at → alone.
        assert effects[unit] == pytest.approx(intact - tt.recall(twin, world, prompts), abs=1e-12)


# --- controls added for issue 32: interaction, affine maps, bits, paired widths ------------------------


def test_object_score_grid_averages_each_pairs_object_logits_over_its_prompts(model, world):
    grid = tf.object_score_grid(model, world, n_contexts=3, seed=5)
    prompts = facts.fact_prompts(world, world.all_facts(), 3, SEQ_LEN, seed=5)
    logits = tt.answer_logits(model, prompts).double().numpy()[:, world.object_tokens()]
    for i, (s, r) in enumerate(world.all_facts()):
        assert np.allclose(grid[s, r], logits[3 * i : 3 * i + 3].mean(axis=0), atol=1e-6)


def test_object_score_grid_without_ffns_is_the_mean_ablated_model(model, world):
    grid = tf.object_score_grid(model, world, n_contexts=2, seed=5, ffns="mean")
    prompts = facts.fact_prompts(world, world.all_facts(), 2, SEQ_LEN, seed=5)
    means = tf.mean_outputs(model, prompts)["ffn"]
    knocked = tt.answer_logits(model, prompts, ffn_ablation={0: means[0], 1: means[1]})
    expected = knocked.double().numpy()[:, world.object_tokens()].reshape(world.n_facts, 2, -1).mean(axis=1)
    assert np.allclose(grid.reshape(world.n_facts, -1), expected, atol=1e-6)
    assert not np.allclose(grid, tf.object_score_grid(model, world, n_contexts=2, seed=5), atol=1e-3)


def test_an_ffn_that_is_affine_where_it_acts_is_matched_by_the_affine_map(world, prompts):
    """With every ReLU on (a large positive bias), the FFN is an affine map of its input: the fit is exact."""
    torch.manual_seed(3)
    config = tt.ModelConfig(vocab_size=world.vocab_size, seq_len=SEQ_LEN, d_model=16, n_heads=2, d_ff=24, n_blocks=2)
    model = tt.TinyTransformer(config).double().eval()
    with torch.no_grad():
        model.blocks[1].ffn.up.bias.fill_(100.0)
    result = tf.ffn_against_affine(model, world, prompts, 1)
    assert result.r2 == pytest.approx(1.0, abs=1e-9)
    assert result.n_prompts > 0 and result.ffn == result.affine


def test_ffn_against_affine_counts_the_prompts_the_stream_gets_wrong(model, world, prompts):
    result = tf.ffn_against_affine(model, world, prompts, 1)
    with torch.no_grad():
        trace = model.trace(prompts.tokens)
    stream = trace.block_inputs[1][:, -1] + trace.attention_outputs[1][:, -1]
    lens = tt.guessed_objects(tt.layer_norm(stream) @ model.unembed.weight.T, world)
    assert result.n_prompts == int((lens != prompts.answers).sum())
    assert result.share == pytest.approx(result.n_prompts / len(prompts.answers))
    assert 0.0 <= result.affine <= 1.0 and 0.0 <= result.ffn <= 1.0 and result.r2 < 1.0


def test_bits_held_are_the_cross_entropy_saved_against_a_uniform_guess(model, world):
    from scipy.special import logsumexp

    chosen = world.all_facts()[:6]
    bits = tf.bits_held(model, world, chosen, n_contexts=2, seed=1)
    prompts = facts.fact_prompts(world, chosen, 2, SEQ_LEN, seed=1)
    scores = tt.answer_logits(model, prompts).double().numpy()[:, world.object_tokens()]
    right = scores[np.arange(len(scores)), world.answers(prompts.facts)]
    cross_entropy = (logsumexp(scores, axis=1) - right) / np.log(2)  # bits, per prompt
    assert bits == pytest.approx(np.sum(np.log2(world.n_objects) - cross_entropy.reshape(6, 2).mean(axis=1)))


def test_a_model_that_knows_nothing_holds_zero_bits(model, world):
    with torch.no_grad():
        model.unembed.weight.zero_()  # every object scores the same
    assert tf.bits_held(model, world, world.all_facts(), n_contexts=1) == pytest.approx(0.0, abs=1e-9)


def test_capacity_table_reads_a_recorded_step_and_gives_intervals():
    def row(d_ff, seed, recalls):
        return {
            "d_ff": d_ff,
            "n_facts": 100,
            "seed": seed,
            "recall": recalls[-1],
            "history": {"step": [0, 50, 100], "recall": recalls},
            "bits": 40.0 * (d_ff + 1),
            "parameters": 100,
        }

    rows = [row(0, 0, [0, 0.2, 0.5]), row(0, 1, [0, 0.1, 0.3]), row(10, 0, [0, 0.4, 0.7]), row(10, 1, [0, 0.3, 0.7])]
    at_50 = tf.capacity_table(rows, 50)
    assert at_50[(10, 100)]["gain_per_unit"] == pytest.approx(2.0)  # each seed gains 0.2 * 100 / 10
    assert at_50[(10, 100)]["bits_per_parameter"] is None  # bits are measured at the end only
    end = tf.capacity_table(rows)
    gains = [2.0, 4.0]
    assert end[(10, 100)]["gain_ci_low"] == pytest.approx(3.0 - 12.706 * np.std(gains, ddof=1) / np.sqrt(2), abs=1e-3)
    assert end[(10, 100)]["bits_per_parameter"] == pytest.approx(4.4) and end[(0, 100)]["bits_per_parameter"] == 0.4
    with pytest.raises(ValueError, match="step 60 is not a recorded step"):
        tf.capacity_table(rows, 60)


def test_parameter_count_is_the_models_own_count():
    for d_ff, n_blocks in ((16, 1), (24, 3)):
        config = tt.ModelConfig(vocab_size=11, seq_len=5, d_model=8, n_heads=2, d_ff=d_ff, n_blocks=n_blocks)
        model = tt.TinyTransformer(config)
        ffn = sum(p.numel() for b in model.blocks for p in b.ffn.parameters())
        assert tt.parameter_count(config) == sum(p.numel() for p in model.parameters())
        assert tt.parameter_count(config, ffn=False) == sum(p.numel() for p in model.parameters()) - ffn


def test_the_matched_width_is_the_narrowest_with_as_many_parameters():
    config = tt.ModelConfig(vocab_size=81, seq_len=6, d_model=32, n_heads=4, d_ff=128, n_blocks=2)
    d = tt.matched_width_without_ffn(config)
    assert d % config.n_heads == 0
    assert tt.parameter_count(replace(config, d_model=d), ffn=False) >= tt.parameter_count(config)
    assert tt.parameter_count(replace(config, d_model=d - config.n_heads), ffn=False) < tt.parameter_count(config)


def test_a_unit_driven_by_most_facts_is_not_polysemantic():
    """Firing strongly for every fact, it 'responds' to every subject and relation; the selectivity rule refuses it."""
    facts_ = np.array([[s, r] for s in range(6) for r in range(4)])
    answers = np.arange(24) % 5
    broad = np.ones((24, 1))
    selective = np.zeros((24, 1))
    selective[[0, 1, 2, 3, 8, 9, 10, 11], 0] = 1.0  # subjects 0 and 2, all their facts: 8 of 24
    scores = np.zeros((1, 8))
    [broad_reading] = tf.read_neurons(broad, facts_, answers, scores, np.arange(5))
    [selective_reading] = tf.read_neurons(selective, facts_, answers, scores, np.arange(5))
    assert broad_reading.kind == "distributed" and selective_reading.kind == "polysemantic"


def test_a_probe_reads_what_its_input_holds_and_not_a_shuffled_answer(world):
    """On a model whose FFN input at → is a one-hot code of the fact, a probe names every answer;
    on the control task (answers shuffled among the facts) it names them too, since it can memorise
    a one-hot code: the control task measures exactly that capacity."""
    torch.manual_seed(0)
    config = tt.ModelConfig(vocab_size=world.vocab_size, seq_len=SEQ_LEN, d_model=16, n_heads=2, d_ff=24, n_blocks=2)
    model = tt.TinyTransformer(config).eval()
    train = facts.fact_prompts(world, world.all_facts(), 3, SEQ_LEN, seed=1)
    fresh = facts.fact_prompts(world, world.all_facts(), 2, SEQ_LEN, seed=2)
    reading = tf.probe_ffn_input(model, world, train, fresh, 1)
    with torch.no_grad():
        x = model.trace(train.tokens).ffn_inputs[1][:, -1].double().numpy()
        x_fresh = model.trace(fresh.tokens).ffn_inputs[1][:, -1].double().numpy()
    design = np.hstack([x, np.ones((len(x), 1))])  # the probe by hand: ridge onto one-hot answers
    targets = np.eye(world.n_objects)[world.answers(train.facts)]
    w = np.linalg.solve(design.T @ design + 1e-3 * len(x) * np.eye(design.shape[1]), design.T @ targets)
    right = (np.hstack([x_fresh, np.ones((len(x_fresh), 1))]) @ w).argmax(axis=1) == world.answers(fresh.facts)
    assert reading.recall == pytest.approx(right.mean())
    assert 0.0 <= reading.where_lens_wrong <= 1.0
    shuffled = tf.probe_ffn_input(model, world, train, fresh, 1, shuffle_seed=3)
    assert 0.0 <= shuffled.recall <= 1.0 and shuffled != reading


def test_the_control_task_permutes_the_objects_among_the_probed_facts(world):
    torch.manual_seed(0)
    config = tt.ModelConfig(vocab_size=world.vocab_size, seq_len=SEQ_LEN, d_model=16, n_heads=2, d_ff=24, n_blocks=1)
    model = tt.TinyTransformer(config).eval()
    prompts = facts.fact_prompts(world, world.all_facts(), 4, SEQ_LEN, seed=1)
    # Trained and scored on the same prompts, a probe on a (random, untrained) input that tells the facts apart
    # fits the real and the shuffled answers alike: what it reads is memorised, on either task.
    real = tf.probe_ffn_input(model, world, prompts, prompts, 0)
    shuffled = tf.probe_ffn_input(model, world, prompts, prompts, 0, shuffle_seed=0)
    assert abs(real.recall - shuffled.recall) < 0.35


def test_fit_linear_probe_is_the_ridge_solution():
    rng = np.random.default_rng(0)
    x, labels = rng.standard_normal((40, 5)), rng.integers(0, 3, 40)
    probe = controls.fit_linear_probe(x, labels, 3, penalty=0.1)
    design = np.hstack([x, np.ones((40, 1))])
    gradient = design.T @ (design @ probe.weights - np.eye(3)[labels]) + 0.1 * 40 * probe.weights
    assert np.abs(gradient).max() < 1e-9  # the normal equations of ridge regression hold
    assert probe.predict(x).tolist() == (design @ probe.weights).argmax(axis=1).tolist()
    with pytest.raises(ValueError, match="labels"):
        controls.fit_linear_probe(x, labels[:-1], 3)


def test_capacity_matched_controls_are_as_large_as_each_width_and_train_on_its_worlds():
    rows = tf.capacity_matched_controls(
        (4, 16),
        2,
        **TINY_SWEEP,
        train_config=tt.TrainConfig(steps=2, batch_size=4, eval_every=2),
        seeds=(0, 1),
    )
    assert [(r["matched_to"], r["seed"], r["n_facts"]) for r in rows] == [(w, s, 6) for w in (4, 16) for s in (0, 1)]
    vocab = facts.make_world(2, 3, 4, seed=0).vocab_size
    for r in rows:
        with_ffn = tt.ModelConfig(vocab_size=vocab, seq_len=4, d_model=8, n_heads=2, d_ff=r["matched_to"], n_blocks=1)
        wide = replace(with_ffn, d_model=r["d_model"])
        assert r["parameters"] == tt.parameter_count(wide, ffn=False) >= tt.parameter_count(with_ffn)
        assert tt.parameter_count(replace(wide, d_model=r["d_model"] - 2), ffn=False) < tt.parameter_count(with_ffn)
        assert r["history"]["step"] == [0, 2] and 0.0 <= r["recall"] <= 1.0
