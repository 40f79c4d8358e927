"""The neuron explorer's data, against the same measurements made another way (unit by unit, by hand)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from ffnbook import facts
from ffnbook import neuron_explorer as ne
from ffnbook import tiny_transformer as tt
from ffnbook import trained_ffn as tf

SEQ_LEN, N_CONTEXTS = 6, 2

pytestmark = pytest.mark.usefixtures("deterministic_torch_thread")


@pytest.fixture
def world() -> facts.FactWorld:
    return facts.make_world(5, 4, 6, n_filler=4, seed=1)


@pytest.fixture
def model(world) -> tt.TinyTransformer:
    torch.manual_seed(0)
    config = tt.ModelConfig(vocab_size=world.vocab_size, seq_len=SEQ_LEN, d_model=16, n_heads=2, d_ff=40, n_blocks=2)
    model = tt.TinyTransformer(config).eval()
    prompts = facts.fact_prompts(world, world.all_facts(), N_CONTEXTS, SEQ_LEN, seed=4)
    with torch.no_grad():  # unit 7 of the last block made active and loud, so silencing it flips answers
        model.blocks[1].ffn.up.bias[7] += 5
        model.blocks[1].ffn.down.weight[:, 7] *= 100
    assert tt.recall(model, world, prompts) > 0
    return model


@pytest.fixture
def prompts(world):
    return facts.fact_prompts(world, world.all_facts(), N_CONTEXTS, SEQ_LEN, seed=4)


def lead(logits: torch.Tensor, world, answers) -> np.ndarray:
    """The right object's logit minus the best other object's, row by row, with a loop."""
    objects = list(world.object_tokens())
    out = []
    for row, answer in zip(logits.numpy(), answers):
        scores = {t: row[t] for t in objects}
        own = scores.pop(int(answer))
        out.append(own - max(scores.values()))
    return np.array(out)


@pytest.mark.parametrize("block, where", [(0, "all"), (0, "subject"), (1, "query"), (1, "relation")])
def test_silencing_matches_unit_by_unit_ablation(model, world, prompts, block, where):
    got = ne.silencing(model, world, prompts, block, where=where)
    n = len(prompts.tokens)
    assert got.n_prompts == n
    # Answers lost: the recall lost of trained_ffn.unit_ablation_effect (a forward pass per unit), in prompts.
    effect = tf.unit_ablation_effect(model, world, prompts, block, where=where)
    np.testing.assert_array_equal(got.answers_lost, np.round(effect * n).astype(int))
    # The lead lost: the whole model run again with the unit's contribution knocked out, unit by unit.
    with torch.no_grad():
        trace = model.trace(prompts.tokens)
        before = lead(trace.logits[:, -1], world, prompts.answers)
        mask = tf._site_mask(prompts, where)
        for unit in (0, 7, 39):
            contribution = trace.ffn_hidden[block][..., unit : unit + 1] * model.blocks[block].ffn.down.weight[:, unit]
            out = trace.ffn_outputs[block] - torch.where(mask.unsqueeze(-1), contribution, 0.0)
            after = lead(model.trace(prompts.tokens, ffn_ablation={block: out}).logits[:, -1], world, prompts.answers)
            assert got.margin_lost[unit] == pytest.approx(np.mean(before - after), abs=1e-4)


def test_some_unit_flips_answers_here(model, world, prompts):
    """The fixture makes the comparison above bite: silencing some units changes answers."""
    assert ne.silencing(model, world, prompts, 1, where="query").answers_lost[7] != 0


def test_class_means_by_hand(model, prompts):
    means = ne.class_means(model, prompts)
    classes = tf.position_classes(prompts)
    with torch.no_grad():
        hidden = model.trace(prompts.tokens).ffn_hidden
    for b, h in enumerate(hidden):
        assert means[b].shape == (40, len(tf.POSITION_CLASSES))
        for c, name in enumerate(tf.POSITION_CLASSES):
            rows = [h[i, t].numpy() for i in range(len(classes)) for t in range(SEQ_LEN) if classes[i, t] == c]
            np.testing.assert_allclose(means[b][:, c], np.mean(rows, axis=0), rtol=1e-6, atol=1e-7, err_msg=name)


def test_explorer_data_repeats_the_readings_of_trained_ffn(model, world, prompts):
    data = json.loads(
        json.dumps(ne.explorer_data(model, world, prompts, N_CONTEXTS, sites=["relation", "query"], n_top=3))
    )
    fact_rows = prompts.facts[::N_CONTEXTS]
    assert data["box"]["d_ff"] == 40 and data["box"]["sites"] == ["relation", "query"]
    assert data["tokens"] == world.token_names() and data["kinds"] == list(tf.NEURON_KINDS)
    assert data["facts"] == [
        [world.subject_token(s), world.relation_token(r), world.object_token(world.objects[s, r])] for s, r in fact_rows
    ]
    asked = facts.Prompts(*(np.asarray(f)[::N_CONTEXTS] for f in prompts))
    assert data["n_prompts"] == len(asked.tokens) == len(fact_rows)
    for b, site in enumerate(["relation", "query"]):
        shown = data["blocks"][b]
        acts = tf.answer_activations(model, prompts, N_CONTEXTS, where=site)[b]
        scores = tf.value_logits(model, b)
        readings = tf.read_neurons(acts, fact_rows, world.answers(fact_rows), scores, world.object_tokens(), block=b)
        lost = tf.unit_ablation_effect(model, world, asked, b, where="all") * len(asked.tokens)
        for unit in (0, 11, 39):
            order = sorted(range(len(fact_rows)), key=lambda f: (-acts[f, unit], f))[:3]
            assert shown["facts"][unit] == order
            assert shown["fact_act"][unit] == pytest.approx(acts[order, unit], abs=6e-4)
            best = sorted(range(world.vocab_size), key=lambda t: (-scores[unit, t], t))[:3]
            assert shown["tokens"][unit] == best
            assert shown["logit"][unit] == pytest.approx(scores[unit, best], abs=6e-4)
            assert data["kinds"][shown["kind"][unit]] == readings[unit].kind
            assert shown["strong"][unit] == len(readings[unit].strong)
            assert shown["lost"][unit][0] == round(lost[unit])
    margins = np.array(data["blocks"][1]["margin"])
    assert data["box"]["initial"] == [1, int(np.argmax(margins[:, 1]))]


def test_bad_input_is_refused_with_its_name(model, world, prompts):
    with pytest.raises(ValueError, match="sites"):
        ne.explorer_data(model, world, prompts, N_CONTEXTS, sites=["query"])
    with pytest.raises(ValueError, match="n_contexts"):
        ne.explorer_data(model, world, prompts, 3)
    with pytest.raises(ValueError, match="where"):
        ne.silencing(model, world, prompts, 0, where="object")
    other = facts.make_world(5, 4, 6, n_filler=4, seed=2)
    with pytest.raises(ValueError, match="prompts must be of this world"):
        ne.explorer_data(model, other, prompts, N_CONTEXTS)
