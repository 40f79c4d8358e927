"""The trained-FFN page shows what a fresh training run computes, value by value (looked up by glue key).

The page's models are trained again here with the page's settings. Training
is deterministic on one machine (seeded, deterministic algorithms, one
thread), so every glued number that comes from the same computation must come
out the same; where a test can compute a number another way (a separate fit,
SciPy's binomial test, counting by hand), it does.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy import stats
from sitecheck import PAGES_WITH_MEASURED_TIMES, figures, glue_data, glued

from ffnbook import controls, facts, memory
from ffnbook import tiny_transformer as tt
from ffnbook import trained_ffn as tf

PAGE = "trained-ffn"
SEEDS = range(5)
SEQ_LEN, N_CONTEXTS, HELD_CONTEXTS = 6, 2, 4
MODEL = dict(seq_len=SEQ_LEN, d_model=32, n_heads=4, d_ff=128, n_blocks=2)
TRAIN = dict(steps=300, batch_size=64, learning_rate=7e-3, eval_every=50, eval_contexts=1)


@pytest.fixture(scope="module")
def rerun():
    """The page's worlds, its ten training runs and its probe prompts, recomputed in this process."""
    with tt.deterministic_torch(seed=0, threads=1):
        worlds = [facts.make_world(16, 16, 32, n_filler=16, seed=s) for s in SEEDS]
        splits = [facts.split_facts(w, 32, seed=s) for w, s in zip(worlds, SEEDS)]
        config = tt.ModelConfig(vocab_size=worlds[0].vocab_size, **MODEL)
        replicas = [tt.Replica(w, s.train, seed, s.held_out) for w, s, seed in zip(worlds, splits, SEEDS)]
        runs = tt.train_replicas(replicas + [r._replace(d_ff=0) for r in replicas], config, tt.TrainConfig(**TRAIN))
        probes = [facts.fact_prompts(w, s.train, N_CONTEXTS, SEQ_LEN, seed=7) for w, s in zip(worlds, splits)]
        yield {"worlds": worlds, "splits": splits, "with": runs[:5], "without": runs[5:], "probes": probes}


@pytest.fixture(scope="module")
def ablations(rerun):
    with tt.deterministic_torch(seed=0, threads=1):
        yield [tf.ablation_study(r.model, w, p) for r, w, p in zip(rerun["with"], rerun["worlds"], rerun["probes"])]


def test_the_page_is_not_allowed_to_differ_between_builds():
    assert PAGE not in PAGES_WITH_MEASURED_TIMES


def test_every_glued_key_is_checked_here(site):
    """Each key the page glues is named in this module (written out, or as a pattern's f-string).

    The keys of the page's problems are checked with every page's problems, in test_pages_problems.py.
    """
    source = Path(__file__).read_text() + (Path(__file__).parent / "test_pages_problems.py").read_text()
    patterns = [re.sub(r"\{[^}]*\}", r"[a-z0-9_]+", m) for m in re.findall(r'f"(tr_[^"]*)"', source)]
    missing = [
        key
        for key in glue_data(site, PAGE)
        if f'"{key}"' not in source and not any(re.fullmatch(p, key) for p in patterns)
    ]
    assert not missing, f"glued keys no test checks: {missing}"


def test_world_and_model_numbers(site, rerun):
    world, split = rerun["worlds"][0], rerun["splits"][0]
    assert glued(site, PAGE, "tr_n_seeds") == len(SEEDS)
    assert glued(site, PAGE, "tr_n_subjects") * glued(site, PAGE, "tr_n_relations") == glued(site, PAGE, "tr_n_facts")
    assert glued(site, PAGE, "tr_n_facts") == world.n_facts == 256
    assert glued(site, PAGE, "tr_n_objects") == world.n_objects
    assert glued(site, PAGE, "tr_n_train") == len(split.train)
    assert glued(site, PAGE, "tr_n_train") + glued(site, PAGE, "tr_n_held_out") == world.n_facts
    assert glued(site, PAGE, "tr_chance") == 1 / world.n_objects
    assert glued(site, PAGE, "tr_seq_len") == SEQ_LEN
    for key, value in (("tr_d_model", 32), ("tr_d_ff", 128), ("tr_n_heads", 4), ("tr_n_blocks", 2)):
        assert glued(site, PAGE, key) == value == MODEL[key[3:]]
    assert glued(site, PAGE, "tr_ratio") == glued(site, PAGE, "tr_d_ff") / glued(site, PAGE, "tr_d_model")
    for key, setting in (
        ("tr_steps", "steps"),
        ("tr_batch", "batch_size"),
        ("tr_lr", "learning_rate"),
        ("tr_eval_every", "eval_every"),
        ("tr_eval_contexts", "eval_contexts"),
    ):
        assert glued(site, PAGE, key) == TRAIN[setting]


def test_training_numbers(site, rerun):
    with_ffn, without = rerun["with"], rerun["without"]
    model = with_ffn[0].model
    assert glued(site, PAGE, "tr_n_runs") == len(with_ffn) + len(without) == 10
    assert glued(site, PAGE, "tr_n_params") == sum(p.numel() for p in model.parameters())
    # Two FFNs of width 128 on d_model 32: weights and biases of both linear layers.
    assert glued(site, PAGE, "tr_n_ffn_params") == 2 * (2 * 32 * 128 + 128 + 32)
    firsts = [tt.first_step_reaching(r.history, "recall", 1.0) for r in with_ffn]
    assert (glued(site, PAGE, "tr_first_all_min"), glued(site, PAGE, "tr_first_all_max")) == (min(firsts), max(firsts))
    mid = len(with_ffn[0].history["step"]) // 2
    assert glued(site, PAGE, "tr_mid_step") == with_ffn[0].history["step"][mid] == TRAIN["steps"] // 2
    assert glued(site, PAGE, "tr_mid_with") == pytest.approx(np.mean([r.history["recall"][mid] for r in with_ffn]))
    assert glued(site, PAGE, "tr_mid_without") == pytest.approx(np.mean([r.history["recall"][mid] for r in without]))
    assert glued(site, PAGE, "tr_mid_without") < glued(site, PAGE, "tr_mid_with")
    assert glued(site, PAGE, "tr_with_final_min") == min(r.history["recall"][-1] for r in with_ffn)
    assert glued(site, PAGE, "tr_without_final_min") == min(r.history["recall"][-1] for r in without)
    # The caption: the schedule is long enough for every model of both kinds to end at 99 % or more.
    assert min(glued(site, PAGE, "tr_with_final_min"), glued(site, PAGE, "tr_without_final_min")) >= 0.99
    assert glued(site, PAGE, "tr_final_loss") == pytest.approx(np.mean([r.history["loss"][-1] for r in with_ffn]))
    assert glued(site, PAGE, "tr_without_final_loss") == pytest.approx(
        np.mean([r.history["loss"][-1] for r in without])
    )
    # The control's FFNs really are silent: every FFN weight of every control is exactly zero.
    assert all(torch.count_nonzero(p) == 0 for r in without for b in r.model.blocks for p in b.ffn.parameters())


def test_control_numbers(site, rerun):
    worlds, splits = rerun["worlds"], rerun["splits"]
    chance = glued(site, PAGE, "tr_chance")
    # The baseline fitted world by world (not jointly, as the page does), scored by its own argmax.
    recalls = []
    for w, s in zip(worlds, splits):
        fit = controls.fit_additive_baseline(w, s.train)
        scores = fit.subject[s.train[:, 0]] + fit.relation[s.train[:, 1]] + fit.bias
        recalls.append(float(np.mean(scores.argmax(axis=1) == w.answers(s.train))))
    one_fact = 1 / len(splits[0].train)
    assert glued(site, PAGE, "tr_baseline") == pytest.approx(np.mean(recalls), abs=one_fact)
    assert glued(site, PAGE, "tr_baseline_low") == pytest.approx(min(recalls), abs=one_fact)
    assert glued(site, PAGE, "tr_baseline_high") == pytest.approx(max(recalls), abs=one_fact)
    assert glued(site, PAGE, "tr_baseline_penalty") == controls.BASELINE_PENALTY
    assert glued(site, PAGE, "tr_probe_contexts") == N_CONTEXTS
    for key, runs in (("tr_recall_with", rerun["with"]), ("tr_recall_without", rerun["without"])):
        assert glued(site, PAGE, key) == pytest.approx(
            np.mean([tt.recall(r.model, w, p) for r, w, p in zip(runs, worlds, rerun["probes"])])
        )
    # Held-out facts, counted by hand: one answer per fact from the scores averaged over its prompts.
    hits = 0
    for r, w, s in zip(rerun["with"], worlds, splits):
        p = facts.fact_prompts(w, s.held_out, HELD_CONTEXTS, SEQ_LEN, seed=9)
        with torch.no_grad():
            logits = r.model(p.tokens)[:, -1, torch.from_numpy(w.object_tokens())]
        guesses = logits.reshape(len(s.held_out), HELD_CONTEXTS, -1).mean(dim=1).argmax(dim=1).numpy()
        hits += int(np.sum(guesses == w.answers(s.held_out)))
    n = len(SEEDS) * len(splits[0].held_out)
    assert glued(site, PAGE, "tr_held_contexts") == HELD_CONTEXTS
    assert (glued(site, PAGE, "tr_held_k"), glued(site, PAGE, "tr_held_n")) == (hits, n)
    test = stats.binomtest(hits, n, chance, alternative="greater")
    interval = stats.binomtest(hits, n).proportion_ci(
        confidence_level=glued(site, PAGE, "tr_confidence"), method="exact"
    )
    assert glued(site, PAGE, "tr_confidence") == 0.95
    assert glued(site, PAGE, "tr_held_p") == pytest.approx(test.pvalue, rel=1e-9)
    assert glued(site, PAGE, "tr_held_low") == pytest.approx(interval.low, abs=1e-12)
    assert glued(site, PAGE, "tr_held_high") == pytest.approx(interval.high, abs=1e-12)
    # What the prose says: the baseline sits between chance and the models, the held-out count at chance.
    assert chance < glued(site, PAGE, "tr_baseline") < glued(site, PAGE, "tr_recall_without")
    assert glued(site, PAGE, "tr_held_low") < chance < glued(site, PAGE, "tr_held_high")


def test_ablation_numbers(site, rerun, ablations):
    def mean(part, blocks, method, where="all"):
        return float(np.mean([tf.ablated_recall(a, part, blocks, method, where) for a in ablations]))

    for b in (0, 1):
        for where in tf.ABLATION_SITES:
            assert glued(site, PAGE, f"tr_ffn{b}_{where}") == pytest.approx(mean("ffn", (b,), "mean", where))
            assert glued(site, PAGE, f"tr_attn{b}_{where}") == pytest.approx(mean("attention", (b,), "mean", where))
        assert glued(site, PAGE, f"tr_ffn{b}_zero_all") == pytest.approx(mean("ffn", (b,), "zero"))
    both = [tf.ablated_recall(a, "ffn", (0, 1), "mean") for a in ablations]
    assert glued(site, PAGE, "tr_no_ffn_mean") == pytest.approx(np.mean(both))
    assert (glued(site, PAGE, "tr_no_ffn_low"), glued(site, PAGE, "tr_no_ffn_high")) == (min(both), max(both))
    assert glued(site, PAGE, "tr_no_attention_mean") == pytest.approx(mean("attention", (0, 1), "mean"))
    # What the prose says: without FFNs, recall is not far above the interaction-free baseline.
    assert 0 < glued(site, PAGE, "tr_no_ffn_mean") - glued(site, PAGE, "tr_baseline") < 0.1
    assert glued(site, PAGE, "tr_ffn_needed") == pytest.approx(glued(site, PAGE, "tr_recall_with") - np.mean(both))
    # One cell rebuilt by hand: block 1's FFN zeroed at → only, in the first seed's model.
    model, world, probe = rerun["with"][0].model, rerun["worlds"][0], rerun["probes"][0]
    with torch.no_grad():
        out = model.trace(probe.tokens).ffn_outputs[1].clone()
    out[:, -1] = 0.0
    assert tf.ablated_recall(ablations[0], "ffn", (1,), "zero", "query") == tt.recall(
        model, world, probe, ffn_ablation={1: out}
    )
    # What the prose says: block 0's attention acts at →, not at the subject or relation tokens.
    assert glued(site, PAGE, "tr_attn0_query") < 0.6 < 0.9 < glued(site, PAGE, "tr_attn0_subject")


def test_patching_and_readout_numbers(site, rerun):
    worlds, probes = rerun["worlds"], rerun["probes"]
    donors = [facts.swap_facts(w, p, facts.other_answer_facts(w, p.facts, seed=8)) for w, p in zip(worlds, probes)]
    moved = {}
    for r, w, p, d in zip(rerun["with"], worlds, probes, donors):
        with torch.no_grad():
            donor_trace = r.model.trace(d.tokens)
            own = r.model.trace(p.tokens)
        for part, key in (("ffn", "ffn_outputs"), ("attention", "attention_outputs")):
            for b in (0, 1):
                patched = getattr(own, key)[b].clone()
                patched[:, -1] = getattr(donor_trace, key)[b][:, -1]  # the donor's output at → only
                guess = tt.guessed_objects(tt.answer_logits(r.model, p, **{f"{part}_ablation": {b: patched}}), w)
                moved.setdefault((part, b), []).append(float(np.mean(guess == d.answers)))
    for (part, b), values in moved.items():
        assert glued(site, PAGE, f"tr_moved_{part}{b}") == pytest.approx(np.mean(values))
    assert glued(site, PAGE, "tr_moved_ffn1_low") == min(moved[("ffn", 1)])
    assert glued(site, PAGE, "tr_moved_ffn1_high") == max(moved[("ffn", 1)])
    for b in (0, 1):
        direct = []
        for r, w, p in zip(rerun["with"], worlds, probes):
            with torch.no_grad():
                out = r.model.trace(p.tokens).ffn_outputs[b][:, -1, :].double()
            scores = (out - out.mean(dim=-1, keepdim=True)) @ r.model.unembed.weight.double().T
            guess = w.object_tokens()[scores[:, torch.from_numpy(w.object_tokens())].argmax(dim=1).numpy()]
            direct.append(float(np.mean(guess == p.answers)))
        assert glued(site, PAGE, f"tr_direct{b}") == pytest.approx(np.mean(direct), abs=2 / len(probes[0].tokens))
        assert glued(site, PAGE, f"tr_direct{b}_low") == pytest.approx(min(direct), abs=2 / len(probes[0].tokens))
        assert glued(site, PAGE, f"tr_direct{b}_high") == pytest.approx(max(direct), abs=2 / len(probes[0].tokens))
    # What the prose says: block 0's readout is below block 1's in every seed, and less than
    # half of it on average ("only"); both attentions' outputs at → move the answer too.
    assert glued(site, PAGE, "tr_direct0_high") < glued(site, PAGE, "tr_direct1_low")
    assert glued(site, PAGE, "tr_direct0") < glued(site, PAGE, "tr_direct1") / 2
    chance = 1 / worlds[0].n_objects
    assert all(np.mean(moved[("attention", b)]) > 3 * chance for b in (0, 1))


def test_key_value_numbers(site, rerun):
    counts, firing = {}, {}
    for b, where in ((1, "query"), (0, "subject")):
        for r, w, s, p in zip(rerun["with"], rerun["worlds"], rerun["splits"], rerun["probes"]):
            acts = tf.answer_activations(r.model, p, N_CONTEXTS, where=where)[b]
            readings = tf.read_neurons(
                acts, s.train, w.answers(s.train), tf.value_logits(r.model, b), w.object_tokens(), block=b
            )
            counts.setdefault(b, []).append(tf.kind_counts(readings))
            firing.setdefault(b, []).append(tf.firing_summary(acts))
        for kind in tf.NEURON_KINDS:
            values = [c[kind] for c in counts[b]]
            assert glued(site, PAGE, f"tr_kind{b}_{kind}") == pytest.approx(np.mean(values))
            assert glued(site, PAGE, f"tr_kind{b}_{kind}_high") == max(values)
        assert sum(np.mean([c[k] for c in counts[b]]) for k in tf.NEURON_KINDS) == pytest.approx(128)
        assert glued(site, PAGE, f"tr_facts_per_unit{b}") == pytest.approx(
            np.mean([f.facts_per_unit for f in firing[b]])
        )
        assert glued(site, PAGE, f"tr_units_per_fact{b}") == pytest.approx(
            np.mean([f.units_per_fact for f in firing[b]])
        )
    assert glued(site, PAGE, "tr_strong") == tf.STRONG_SHARE
    stored = memory.random_memories(64, 128, seed=0)
    hidden = memory.retrieve(memory.build_memory_ffn(*stored), stored.keys).hidden
    # One unit per stored pair, by construction: each key drives its own unit and no other.
    assert glued(site, PAGE, "tr_hand_units_per_fact") == glued(site, PAGE, "tr_hand_facts_per_unit") == 1.0
    assert np.all((hidden > 0).sum(axis=1) == 1)


def test_sparsity_numbers(site, rerun):
    """Counted by hand: the share of hidden units above zero, token by token, at each kind of position."""
    shares = {}
    for r, p in zip(rerun["with"], rerun["probes"]):
        classes = tf.position_classes(p)
        for label, model in (("init", r.initial_model), ("trained", r.model)):
            with torch.no_grad():
                hidden = model.trace(p.tokens).ffn_hidden
            for b, h in enumerate(hidden):
                on = (h > 0).double().mean(dim=-1).numpy()
                for where in ("query", "subject", "relation", "all"):
                    cells = on if where == "all" else on[classes == tf.POSITION_CLASSES.index(where)]
                    shares.setdefault((label, where, b), []).append(float(cells.mean()))
    for (label, where, b), values in shares.items():
        assert glued(site, PAGE, f"tr_active_{label}_{where}{b}") == pytest.approx(np.mean(values))
    assert glued(site, PAGE, "tr_active_skip1") == pytest.approx(1 - np.mean(shares[("trained", "query", 1)]))
    for b in (0, 1):  # the heading: fewer units fire at → after training
        assert glued(site, PAGE, f"tr_active_trained_query{b}") < glued(site, PAGE, f"tr_active_init_query{b}")
    for where in ("subject", "relation"):  # block 1 where nothing it writes is read: no change on average
        assert abs(np.mean(shares[("trained", where, 1)]) - np.mean(shares[("init", where, 1)])) < 0.05


def test_position_numbers(site, rerun):
    model, probe, world = rerun["with"][0].model, rerun["probes"][0], rerun["worlds"][0]
    reshape = [tf.reshape_diffs(model, probe, b) for b in (0, 1)]
    assert glued(site, PAGE, "tr_reshape_ffn") == max(r["ffn"] for r in reshape) < 1e-12
    assert glued(site, PAGE, "tr_reshape_ffn_numpy") == max(r["ffn_numpy"] for r in reshape)
    assert glued(site, PAGE, "tr_reshape_attention") == min(r["attention"] for r in reshape)
    same = tt.numpy_block_max_diff(model, 0, tf.block_inputs(model, probe, 0)[0])
    assert glued(site, PAGE, "tr_same_block_no_mask") == same["no_mask"]
    assert glued(site, PAGE, "tr_same_block_causal") == same["causal"]
    looks = [tf.attention_share_on_fact(r.model, p) for r, p in zip(rerun["with"], rerun["probes"])]
    assert [glued(site, PAGE, "tr_look0"), glued(site, PAGE, "tr_look1")] == pytest.approx(np.mean(looks, axis=0))
    assert glued(site, PAGE, "tr_uniform_share") == 2 / SEQ_LEN
    assert glued(site, PAGE, "tr_influence_prompt") == facts.prompt_text(world, probe.tokens[0])


def test_capacity_numbers(site):
    """The sweep trained again; the per-unit gain recomputed seed by seed from its recalls."""
    config = tt.TrainConfig(steps=250, batch_size=64, learning_rate=1e-2, eval_every=50, eval_contexts=1)
    with tt.deterministic_torch(seed=0, threads=1):
        rows = tf.capacity_sweep(
            (0, 32, 128),
            (32,),
            n_relations=16,
            n_objects=32,
            d_model=32,
            n_heads=4,
            n_blocks=1,
            seq_len=3,
            train_config=config,
            seeds=SEEDS,
        )
    recall = {(r["d_ff"], r["seed"]): r["recall"] for r in rows}
    n_facts = rows[0]["n_facts"]
    assert glued(site, PAGE, "tr_cap_facts") == n_facts == 32 * 16
    assert glued(site, PAGE, "tr_cap_steps") == config.steps
    assert (glued(site, PAGE, "tr_cap_narrow"), glued(site, PAGE, "tr_cap_wide")) == (32, 128)
    for key, width in (("tr_cap_none", 0), ("tr_cap_narrow_recall", 32), ("tr_cap_wide_recall", 128)):
        assert glued(site, PAGE, key) == pytest.approx(np.mean([recall[(width, s)] for s in SEEDS]))
    for key, width in (("tr_cap_gain_narrow", 32), ("tr_cap_gain_wide", 128)):
        gains = [(recall[(width, s)] - recall[(0, s)]) * n_facts / width for s in SEEDS]
        assert glued(site, PAGE, key) == pytest.approx(np.mean(gains))
        if width == 32:
            assert glued(site, PAGE, "tr_cap_gain_narrow_low") == pytest.approx(min(gains))
            assert glued(site, PAGE, "tr_cap_gain_narrow_high") == pytest.approx(max(gains))
    # What the prose says: a few facts per unit at most, fewer as the FFN widens.
    assert 0 < glued(site, PAGE, "tr_cap_gain_wide") < glued(site, PAGE, "tr_cap_gain_narrow") < 10


def test_figures_have_alt_text_computed_with_them(site):
    imgs = figures(site, PAGE)
    assert len(imgs) == 5
    alts = [img.get("alt", "") for img in imgs]
    assert all(len(alt.strip()) > 80 for alt in alts)
    assert any(f"attention 0: subject {100 * glued(site, PAGE, 'tr_attn0_subject'):.0f}%" in alt for alt in alts)
    assert any(f"d_ff 0: {100 * glued(site, PAGE, 'tr_cap_none'):.0f}%" in alt for alt in alts)
    for key in (
        "tr_training_figure",
        "tr_ablation_figure",
        "tr_neuron_figure",
        "tr_influence_figure",
        "tr_capacity_figure",
    ):
        assert key in glue_data(site, PAGE)


# --- the neuron explorer: its JSON file against ffnbook, unit by unit -------------------------------------


def test_units_explorer_json_equals_ffnbook_unit_by_unit(site, rerun):
    """The explorer's data, looked up by block and unit, equals the measurements of ffnbook.trained_ffn
    made again here one unit at a time (the page computes them batched, in ffnbook.neuron_explorer)."""
    import json

    from sitecheck import soup_of

    box = json.loads(soup_of(site, PAGE).select_one(".ffn-x-units script.ffn-x-data").get_text())
    data = json.loads((site / box["src"]).read_text(encoding="utf-8"))
    assert json.loads(glued(site, PAGE, "tr_units_data")) == data
    model, world, probe = rerun["with"][0].model, rerun["worlds"][0], rerun["probes"][0]
    asked = facts.Prompts(*(np.asarray(f)[::N_CONTEXTS] for f in probe))  # one prompt per fact
    fact_rows = probe.facts[::N_CONTEXTS]
    sites = ["subject", "query"]  # where the page reads each block
    assert data["box"]["sites"] == sites and data["n_prompts"] == len(asked.tokens) == len(rerun["splits"][0].train)
    classes = tf.position_classes(probe)
    with torch.no_grad():
        trace = model.trace(probe.tokens)
        asked_trace = model.trace(asked.tokens)

    def leads(logits):
        objects = world.object_tokens()
        scores = logits[:, objects].numpy().astype(np.float64)
        right = np.searchsorted(objects, asked.answers)
        own = scores[np.arange(len(scores)), right]
        scores[np.arange(len(scores)), right] = -np.inf
        return own - scores.max(axis=1)

    intact = leads(asked_trace.logits[:, -1])
    assert glued(site, PAGE, "tr_units_lead") == data["lead"] == pytest.approx(intact.mean(), abs=1e-3)
    no_change, top_margin = 0, (-np.inf, None)
    for b, where in enumerate(sites):
        shown = data["blocks"][b]
        acts = tf.answer_activations(model, probe, N_CONTEXTS, where=where)[b]
        scores = tf.value_logits(model, b)
        lost = {w: tf.unit_ablation_effect(model, world, asked, b, where=w) * len(asked.tokens) for w in ("all", where)}
        np.testing.assert_array_equal(shown["lost"], np.round(np.column_stack([lost["all"], lost[where]])))
        no_change += int(np.sum((np.round(lost["all"]) == 0) & (np.round(lost[where]) == 0)))
        best_unit = int(np.argmax(np.asarray(shown["margin"]).max(axis=1)))  # checked below, as the prose cites it
        for unit in (0, 63, 127, data["box"]["initial"][1], best_unit):
            hidden = trace.ffn_hidden[b][..., unit].numpy()
            means = [hidden[classes == c].mean() for c in range(len(tf.POSITION_CLASSES))]
            assert shown["act"][unit] == pytest.approx(means, abs=6e-4)
            order = np.argsort(-acts[:, unit], kind="stable")[:5]
            assert shown["facts"][unit] == order.tolist()
            assert shown["fact_act"][unit] == pytest.approx(acts[order, unit], abs=6e-4)
            assert data["facts"][order[0]][:2] == [
                world.subject_token(fact_rows[order[0]][0]),
                world.relation_token(fact_rows[order[0]][1]),
            ]
            best = np.argsort(-scores[unit], kind="stable")[:5]
            assert shown["tokens"][unit] == best.tolist()
            assert shown["logit"][unit] == pytest.approx(scores[unit, best], abs=6e-4)
            for i, w in enumerate(("all", where)):
                mask = tf._site_mask(asked, w).unsqueeze(-1)
                with torch.no_grad():
                    part = asked_trace.ffn_hidden[b][..., unit : unit + 1] * model.blocks[b].ffn.down.weight[:, unit]
                    out = asked_trace.ffn_outputs[b] - torch.where(mask, part, 0.0)
                    after = leads(model.trace(asked.tokens, ffn_ablation={b: out}).logits[:, -1])
                assert shown["margin"][unit][i] == pytest.approx(np.mean(intact - after), abs=1e-3)
        top_margin = max(top_margin, (max(shown["margin"][best_unit]), (b, best_unit)))
    assert glued(site, PAGE, "tr_units_seed") == SEEDS[0]
    assert glued(site, PAGE, "tr_units_n_prompts") == len(asked.tokens)
    assert glued(site, PAGE, "tr_units_n_units") == 2 * MODEL["d_ff"]
    assert glued(site, PAGE, "tr_units_no_change") == no_change >= 0.9 * 2 * MODEL["d_ff"]
    assert glued(site, PAGE, "tr_units_max_margin") == top_margin[0] < data["lead"] / 10
