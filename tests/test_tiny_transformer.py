"""The tiny transformer: shapes, equality with the chapter's NumPy block, ablations and training."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

import ffnbook
from ffnbook import block as np_block
from ffnbook import facts
from ffnbook import tiny_transformer as tt

D_MODEL, N_HEADS, D_FF = 16, 4, 48

# One deterministic torch thread for every test (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("deterministic_torch_thread")


@pytest.fixture
def world() -> facts.FactWorld:
    return facts.make_world(6, 3, 6, n_filler=4, seed=0)


def small_model(world, n_blocks=2, seed=0) -> tt.TinyTransformer:
    torch.manual_seed(seed)
    config = tt.ModelConfig(
        vocab_size=world.vocab_size, seq_len=6, d_model=D_MODEL, n_heads=N_HEADS, d_ff=D_FF, n_blocks=n_blocks
    )
    return tt.TinyTransformer(config).eval()


def test_shapes_of_the_trace(world):
    model = small_model(world)
    tokens = facts.fact_prompts(world, world.all_facts(), 2, 6, seed=0).tokens
    trace = model.trace(tokens)
    n = len(tokens)
    assert trace.logits.shape == (n, 6, world.vocab_size)
    for per_block, width in (
        (trace.block_inputs, D_MODEL),
        (trace.ffn_inputs, D_MODEL),
        (trace.ffn_hidden, D_FF),
        (trace.ffn_outputs, D_MODEL),
        (trace.attention_outputs, D_MODEL),
    ):
        assert len(per_block) == 2 and all(t.shape == (n, 6, width) for t in per_block)
    assert all(w.shape == (n, N_HEADS, 6, 6) for w in trace.attention_weights)
    assert torch.all(trace.ffn_hidden[0] >= 0)  # after ReLU


def test_the_trace_adds_up_to_the_residual_stream(world):
    model = small_model(world)
    trace = model.trace(facts.fact_prompts(world, world.all_facts(), 1, 6, seed=0).tokens)
    rebuilt = trace.block_inputs[0] + trace.attention_outputs[0] + trace.ffn_outputs[0]
    assert torch.allclose(rebuilt, trace.block_inputs[1], atol=1e-6)


def test_a_block_with_copied_weights_equals_the_numpy_block():
    attn = ffnbook.init_attention_params(D_MODEL, seed=1)
    ffn_params = ffnbook.init_ffn_params(D_MODEL, D_FF, seed=2)
    x = ffnbook.random_tokens((5, D_MODEL), seed=3)
    module = tt.Block.from_numpy(attn, ffn_params, n_heads=N_HEADS, causal=False)
    with torch.no_grad():
        got = module(torch.from_numpy(x)).numpy()
    want = np_block.transformer_block(x, attn, ffn_params, n_heads=N_HEADS, norm="pre")
    assert np.max(np.abs(got - want)) < 1e-12
    exported_attn, exported_ffn = module.to_numpy()
    assert all(np.array_equal(a, b) for a, b in zip(exported_attn, attn))
    assert all(np.array_equal(a, b) for a, b in zip(exported_ffn, ffn_params))


def test_the_causal_block_sees_exactly_each_prefix():
    attn = ffnbook.init_attention_params(D_MODEL, seed=4)
    ffn_params = ffnbook.init_ffn_params(D_MODEL, D_FF, seed=5)
    x = ffnbook.random_tokens((6, D_MODEL), seed=6)
    with torch.no_grad():
        got = tt.Block.from_numpy(attn, ffn_params, n_heads=N_HEADS)(torch.from_numpy(x)).numpy()
    for t in range(6):
        prefix = np_block.transformer_block(x[: t + 1], attn, ffn_params, n_heads=N_HEADS, norm="pre")
        assert np.max(np.abs(got[t] - prefix[-1])) < 1e-12


def test_numpy_block_max_diff_on_a_model(world):
    model = small_model(world)
    diffs = tt.numpy_block_max_diff(model, 1, ffnbook.random_tokens((6, D_MODEL), seed=0))
    assert set(diffs) == {"no_mask", "causal"} and max(diffs.values()) < 1e-12


def test_a_later_token_cannot_change_earlier_outputs(world):
    model = small_model(world)
    tokens = facts.fact_prompts(world, [[0, 0]], 1, 6, seed=0).tokens
    edited = tokens.copy()
    edited[0, 4] = int(world.subject_token(5))
    with torch.no_grad():
        a, b = model(tokens), model(edited)
    assert torch.equal(a[:, :4], b[:, :4]) and not torch.equal(a[:, 4:], b[:, 4:])


def test_zero_ablation_equals_a_model_whose_ffn_writes_nothing(world):
    model = small_model(world)
    tokens = facts.fact_prompts(world, world.all_facts(), 1, 6, seed=1).tokens
    silenced = small_model(world)
    silenced.load_state_dict(model.state_dict())
    with torch.no_grad():
        silenced.blocks[0].ffn.down.weight.zero_()
        silenced.blocks[0].ffn.down.bias.zero_()
        want = silenced(tokens)
        got = model.trace(tokens, ffn_ablation={0: "zero"}).logits
    assert torch.allclose(got, want, atol=1e-6)


def test_mean_ablation_over_a_single_prompt_changes_nothing(world):
    model = small_model(world)
    tokens = facts.fact_prompts(world, [[1, 2]], 1, 6, seed=2).tokens
    with torch.no_grad():
        trace = model.trace(tokens)
        own = {b: trace.ffn_outputs[b][0] for b in range(2)}  # the average of one prompt is itself
        own_attention = {b: trace.attention_outputs[b][0] for b in range(2)}
        got = model.trace(tokens, ffn_ablation=own, attention_ablation=own_attention).logits
    assert torch.allclose(got, trace.logits, atol=1e-6)


def test_recall_and_guesses_on_a_hand_made_case(world):
    logits = torch.zeros(3, world.vocab_size)
    objects = world.object_tokens()
    logits[0, objects[2]] = 5.0
    logits[1, 0] = 9.0  # a non-object token scores highest; only objects may be guessed
    logits[1, objects[4]] = 1.0
    logits[2, objects[0]] = 1.0
    assert tt.guessed_objects(logits, world).tolist() == [objects[2], objects[4], objects[0]]


def test_training_lowers_the_loss_and_recalls_a_tiny_world(world):
    """Stated: 150 steps on an 18-fact world reach at least 90 % recall in new contexts."""
    config = tt.ModelConfig(vocab_size=world.vocab_size, seq_len=5, d_model=32, n_heads=2, d_ff=64, n_blocks=1)
    run = tt.train_on_facts(
        world,
        world.all_facts(),
        config,
        tt.TrainConfig(steps=150, batch_size=64, learning_rate=5e-3, eval_every=50, eval_contexts=4),
    )
    losses = run.history["loss"][1:]
    assert losses[-1] < losses[0] / 10
    assert run.history["recall"][0] < 0.5 and run.history["recall"][-1] >= 0.9
    assert run.history["step"] == [0, 50, 100, 150]
    prompts = facts.fact_prompts(world, world.all_facts(), 3, 5, seed=99)
    assert tt.recall(run.model, world, prompts) >= 0.9
    # The untouched copy still holds the initial weights.
    assert not torch.equal(run.initial_model.unembed.weight, run.model.unembed.weight)


def test_training_is_bit_for_bit_repeatable(world):
    config = tt.ModelConfig(vocab_size=world.vocab_size, seq_len=5, d_model=16, n_heads=2, d_ff=32, n_blocks=2)
    settings = tt.TrainConfig(steps=20, batch_size=16, eval_every=10)
    split = facts.split_facts(world, 3, seed=0)
    a = tt.train_on_facts(world, split.train, config, settings, held_out_facts=split.held_out)
    b = tt.train_on_facts(world, split.train, config, settings, held_out_facts=split.held_out)
    for (name, p), q in zip(a.model.state_dict().items(), b.model.state_dict().values()):
        assert torch.equal(p, q), name
    assert a.history == b.history
    c = tt.train_on_facts(world, split.train, config, tt.TrainConfig(steps=20, batch_size=16, eval_every=10, seed=1))
    assert not torch.equal(a.model.unembed.weight, c.model.unembed.weight)


def test_deterministic_torch_restores_the_session():
    torch.set_num_threads(2)
    torch.use_deterministic_algorithms(False)
    state = torch.random.get_rng_state()
    with tt.deterministic_torch(seed=5, threads=1):
        assert torch.get_num_threads() == 1 and torch.are_deterministic_algorithms_enabled()
        torch.rand(3)
    assert torch.get_num_threads() == 2 and not torch.are_deterministic_algorithms_enabled()
    assert torch.equal(torch.random.get_rng_state(), state)


def test_active_share_counts_nonzero_hidden_units(world):
    model = small_model(world, n_blocks=1)
    prompts = facts.fact_prompts(world, world.all_facts(), 1, 6, seed=0)
    with torch.no_grad():
        hidden = model.trace(prompts.tokens).ffn_hidden[0]
    assert tt.active_share(model, prompts) == [float((hidden > 0).double().mean())]
    assert tt.active_share(model, prompts, answer_only=True) == [float((hidden[:, -1] > 0).double().mean())]


def test_first_step_reaching():
    history = {"step": [0, 10, 20], "recall": [0.2, 0.5, 0.5]}
    assert tt.first_step_reaching(history, "recall", 0.5) == 10
    assert tt.first_step_reaching(history, "recall", 0.9) is None


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda m: m(np.zeros((2, 6), dtype=np.int32)), TypeError, "int64"),
        (lambda m: m(torch.zeros(2, 7, dtype=torch.long)), ValueError, "seq_len"),
        (lambda m: m(torch.full((1, 6), 999, dtype=torch.long)), ValueError, "tokens must hold ids in"),
        (lambda m: m.trace(torch.zeros(1, 6, dtype=torch.long), ffn_ablation={2: "zero"}), ValueError, "block index"),
        (
            lambda m: m.trace(torch.zeros(1, 6, dtype=torch.long), attention_ablation={0: "half"}),
            ValueError,
            "must be 'zero' or a tensor",
        ),
        (
            lambda m: m.trace(torch.zeros(1, 6, dtype=torch.long), ffn_ablation={0: torch.zeros(3)}),
            ValueError,
            "must be 'zero' or a tensor",
        ),
        (lambda m: tt.ModelConfig(vocab_size=10, seq_len=4, d_model=10, n_heads=4), ValueError, "divisible"),
        (lambda m: tt.TrainConfig(learning_rate=2.0), ValueError, "learning_rate"),
        (lambda m: tt.TinyTransformer({"d_model": 4}), TypeError, "ModelConfig"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(world, call, error, message):
    with pytest.raises(error, match=message):
        call(small_model(world))


def test_train_refuses_a_model_for_another_world(world):
    config = tt.ModelConfig(vocab_size=world.vocab_size + 1, seq_len=5, d_model=16, n_heads=2)
    with pytest.raises(ValueError, match="vocab_size"):
        tt.train_on_facts(world, world.all_facts(), config)


# --- the forward pass, knocks and batched replicas ---------------------------------------------


def test_forward_runs_the_blocks_and_agrees_with_the_trace(world):
    model = small_model(world)
    tokens = facts.fact_prompts(world, world.all_facts(), 2, 6, seed=3).tokens
    with torch.no_grad():
        logits = model(tokens)
        x = model.embed(torch.from_numpy(tokens)) + model.position(torch.arange(6))
        for block in model.blocks:  # Block.forward, called directly
            x = block(x)
        by_hand = model.unembed(tt.layer_norm(x))
        traced = model.trace(tokens).logits
        last = model(tokens, query_only=True)
    assert torch.equal(logits, by_hand)
    assert torch.allclose(logits, traced, atol=1e-6)
    assert torch.allclose(last, logits[:, -1, :], rtol=0, atol=1e-5)  # the last block computed → alone


@pytest.mark.parametrize("causal", [True, False])
def test_a_block_computing_the_last_position_only_equals_the_full_block_there(causal):
    attn = ffnbook.init_attention_params(D_MODEL, seed=7)
    ffn_params = ffnbook.init_ffn_params(D_MODEL, D_FF, seed=8)
    block = tt.Block.from_numpy(attn, ffn_params, n_heads=N_HEADS, causal=causal)
    x = torch.from_numpy(ffnbook.random_tokens((3, 6, D_MODEL), seed=9))  # float64
    with torch.no_grad():
        full, last = block(x), block(x, last_only=True)
        _, weights = block.attention(tt.layer_norm(x), return_weights=True, last_only=True)
    assert last.shape == (3, 1, D_MODEL) and weights.shape == (3, N_HEADS, 1, 6)
    assert torch.max(torch.abs(last - full[:, -1:])) < 1e-12
    assert torch.all(weights > 0)  # the last position sees every position, mask or not


def test_a_knock_replaces_only_where_its_mask_is_true(world):
    model = small_model(world)
    prompts = facts.fact_prompts(world, world.all_facts(), 1, 6, seed=4)
    n = len(prompts.tokens)
    with torch.no_grad():
        trace = model.trace(prompts.tokens)
        everywhere = model.trace(prompts.tokens, ffn_ablation={0: "zero"}).logits
        all_true = model.trace(prompts.tokens, ffn_ablation={0: tt.Knock("zero", torch.ones(n, 6, dtype=torch.bool))})
        none = model.trace(prompts.tokens, ffn_ablation={0: tt.Knock("zero", torch.zeros(6, dtype=torch.bool))})
        last_only = torch.zeros(6, dtype=torch.bool)
        last_only[-1] = True
        at_last = model.trace(prompts.tokens, ffn_ablation={0: tt.Knock("zero", last_only)})
    assert torch.equal(all_true.logits, everywhere)
    assert torch.equal(none.logits, trace.logits)
    # Block 0's FFN knocked out at the last position only: earlier positions are untouched.
    assert torch.equal(at_last.ffn_outputs[0][:, :-1], trace.ffn_outputs[0][:, :-1])
    assert torch.all(at_last.ffn_outputs[0][:, -1] == 0)
    # A per-prompt tensor (activation patching): prompt i receives prompt i+1's output.
    donor = trace.ffn_outputs[1].roll(1, dims=0)
    with torch.no_grad():
        patched = model.trace(prompts.tokens, ffn_ablation={1: donor})
    assert torch.equal(patched.ffn_outputs[1], donor)
    with pytest.raises(ValueError, match="where must be a bool tensor"):
        model.trace(prompts.tokens, ffn_ablation={0: tt.Knock("zero", torch.ones(5, dtype=torch.bool))})


def _replicas_for_test():
    """Two worlds of the same size, each with its own split; four replicas of different kinds."""
    replicas = []
    for seed in (0, 1):
        w = facts.make_world(6, 3, 6, n_filler=4, seed=seed)
        split = facts.split_facts(w, 3, seed=seed)
        replicas.append(tt.Replica(w, split.train, seed, split.held_out))
    return replicas + [replicas[0]._replace(d_ff=0), replicas[1]._replace(d_ff=8, seed=5)]


@pytest.mark.parametrize("n_blocks", [1, 2])
def test_a_trace_of_the_last_position_alone_gives_the_full_trace_s_answer_logits(n_blocks):
    """With and without knocks (zero, per-position means, patched outputs, masks); tolerance 1e-12 in float64."""
    config = tt.ModelConfig(vocab_size=13, seq_len=5, d_model=8, n_heads=2, d_ff=16, n_blocks=n_blocks)
    torch.manual_seed(0)
    model = tt.TinyTransformer(config).double()
    tokens = torch.randint(0, 13, (7, 5), generator=torch.Generator().manual_seed(2))
    mask = torch.rand(7, 5, generator=torch.Generator().manual_seed(3)) > 0.5
    last = n_blocks - 1
    knocks = [
        {},
        {"ffn_ablation": {last: "zero"}},
        {"ffn_ablation": {last: tt.Knock(torch.randn(5, 8, dtype=torch.float64), mask)}},
        {"attention_ablation": {last: tt.Knock(torch.randn(7, 5, 8, dtype=torch.float64), mask[0])}},
        {
            "attention_ablation": {0: torch.randn(8, dtype=torch.float64)},
            "ffn_ablation": {last: tt.Knock("zero", mask)},
        },
    ]
    with torch.no_grad():
        for knock in knocks:
            full = model.trace(tokens, **knock).logits[:, -1, :]
            alone = model.trace(tokens, last_only=True, **knock)
            assert alone.logits.shape == (7, 1, 13)
            assert torch.allclose(alone.logits[:, -1, :], full, rtol=0, atol=1e-12)


@pytest.mark.parametrize("n_blocks", [1, 2, 3])
def test_stacked_logits_equal_each_models_own_forward(n_blocks):
    """Stated tolerance: 1e-12 in float64 (the same products, summed in another order at most)."""
    config = tt.ModelConfig(vocab_size=13, seq_len=5, d_model=8, n_heads=2, d_ff=16, n_blocks=n_blocks)
    models = []
    for seed in range(3):
        torch.manual_seed(seed)
        models.append(tt.TinyTransformer(config).double())
    weights = {name: torch.stack([m.state_dict()[name] for m in models]) for name in models[0].state_dict()}
    tokens = torch.randint(0, 13, (3, 7, 5), generator=torch.Generator().manual_seed(0))
    got = tt._stacked_logits(tt._fused(weights), tokens, config)
    assert got.shape == (3, 7, 13)
    with torch.no_grad():
        for r, model in enumerate(models):
            want = model.trace(tokens[r]).logits[:, -1, :]  # every position computed, read at →
            assert torch.allclose(got[r], want, rtol=0, atol=1e-12)
            assert not torch.allclose(got[r], got[(r + 1) % 3], atol=1e-3)  # each model reads its own weights


def test_stacked_logits_run_each_width_s_ffn_on_its_own_models():
    """Models of two FFN widths and one without FFN in one stack; stated tolerance 1e-12 in float64."""
    config = tt.ModelConfig(vocab_size=13, seq_len=5, d_model=8, n_heads=2, d_ff=16, n_blocks=2)
    models = []
    for seed, d_ff in enumerate((16, 16, 16, 4)):
        torch.manual_seed(seed)
        models.append(tt.TinyTransformer(dataclasses.replace(config, d_ff=d_ff)).double())
    tt._silence_ffns(models[2])  # the third model has no FFN: it is in no width's range below

    def stacked(rows, ffn):
        return {
            name: torch.stack([models[r].state_dict()[name] for r in rows])
            for name in models[0].state_dict()
            if (".ffn." in name) == ffn
        }

    ffns = [(0, 2, stacked((0, 1), True)), (3, 4, stacked((3,), True))]
    tokens = torch.randint(0, 13, (4, 7, 5), generator=torch.Generator().manual_seed(1))
    got = tt._stacked_logits(tt._fused(stacked(range(4), False)), tokens, config, ffns)
    with torch.no_grad():
        for r, model in enumerate(models):
            assert torch.allclose(got[r], model.trace(tokens[r]).logits[:, -1, :], rtol=0, atol=1e-12)


def test_adamw_steps_are_torch_s_adamw_steps_bit_for_bit():
    torch.manual_seed(0)
    params = [torch.randn(3, 4), torch.randn(5)]
    ours = [p.clone().requires_grad_(True) for p in params]
    theirs = [p.clone().requires_grad_(True) for p in params]
    optimisers = (tt._AdamW(ours, 5e-3, 0.01), torch.optim.AdamW(theirs, lr=5e-3, weight_decay=0.01, fused=True))
    for step in range(5):
        for optimiser, ps in zip(optimisers, (ours, theirs)):
            optimiser.zero_grad()
            sum(((p - step) ** 2).sum() for p in ps).backward()
            optimiser.step()
    for a, b, p in zip(ours, theirs, params):
        assert torch.equal(a, b) and not torch.equal(a, p)


def test_batched_replicas_train_like_the_same_models_one_by_one():
    """Stated tolerance: after 30 steps every weight agrees to 1e-4 with its one-by-one twin.

    The batched products sum in another order, so the two runs are not bit
    for bit equal; they start from identical weights, draw identical batches
    and record the same recall.
    """
    from dataclasses import replace

    config = tt.ModelConfig(
        vocab_size=_replicas_for_test()[0].world.vocab_size, seq_len=5, d_model=16, n_heads=2, d_ff=24, n_blocks=2
    )
    settings = tt.TrainConfig(steps=30, batch_size=16, learning_rate=5e-3, eval_every=10)
    replicas = _replicas_for_test()
    batched = tt.train_replicas(replicas, config, settings)
    for r, got in zip(replicas, batched):
        width = config.d_ff if r.d_ff in (None, 0) else r.d_ff
        alone = tt.train_on_facts(
            r.world,
            r.train_facts,
            replace(config, d_ff=width),
            replace(settings, seed=r.seed),
            held_out_facts=r.held_out_facts,
            without_ffn=r.d_ff == 0,
            initial_model=None if width == config.d_ff else got.initial_model,  # another width: paired weights
        )
        assert got.model.config == alone.model.config and got.train_config.seed == r.seed
        for name, p in alone.initial_model.state_dict().items():
            assert torch.equal(p, got.initial_model.state_dict()[name]), name
        for name, p in alone.model.state_dict().items():
            assert torch.allclose(p, got.model.state_dict()[name], rtol=0, atol=1e-4), name
        assert not torch.equal(alone.model.unembed.weight, alone.initial_model.unembed.weight)  # it did train
        assert got.history["step"] == alone.history["step"] == [0, 10, 20, 30]
        assert got.history["recall"] == alone.history["recall"]
        assert got.history["held_out_recall"] == alone.history["held_out_recall"]
        assert np.allclose(got.history["loss"][1:], alone.history["loss"][1:], rtol=1e-4)


def test_replicas_of_one_seed_share_every_initial_weight_outside_the_ffns_whatever_their_width():
    replicas = _replicas_for_test()
    config = tt.ModelConfig(vocab_size=replicas[0].world.vocab_size, seq_len=5, d_model=16, n_heads=2, d_ff=24)
    widths = (None, 0, 8, 1)
    runs = tt.train_replicas(
        [replicas[0]._replace(d_ff=w) for w in widths], config, tt.TrainConfig(steps=1, batch_size=4, eval_every=1)
    )
    states = [r.initial_model.state_dict() for r in runs]
    for name, weight in states[0].items():
        if ".ffn." not in name:
            assert all(torch.equal(weight, other[name]) for other in states[1:]), name
    assert [r.model.config.d_ff for r in runs] == [24, 24, 8, 1]
    assert torch.count_nonzero(runs[2].initial_model.blocks[0].ffn.up.weight) > 0  # its own FFN, drawn at its width
    with tt.deterministic_torch(replicas[0].seed):  # the configured width is drawn as train_on_facts draws it
        own = tt.TinyTransformer(config)
    assert all(torch.equal(w, states[0][name]) for name, w in own.state_dict().items())


def test_a_replica_without_ffn_never_uses_its_ffn():
    replicas = _replicas_for_test()
    config = tt.ModelConfig(vocab_size=replicas[0].world.vocab_size, seq_len=5, d_model=16, n_heads=2, d_ff=24)
    result = tt.train_replicas(replicas[2:3], config, tt.TrainConfig(steps=10, batch_size=8, eval_every=5))[0]
    for block in result.model.blocks:
        assert all(torch.count_nonzero(p) == 0 for p in block.ffn.parameters())
    prompts = facts.fact_prompts(replicas[2].world, replicas[2].train_facts, 1, 5, seed=0)
    with torch.no_grad():
        assert all(torch.count_nonzero(out) == 0 for out in result.model.trace(prompts.tokens).ffn_outputs)
    assert not torch.equal(result.model.embed.weight, result.initial_model.embed.weight)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda rs: rs + [rs[0]._replace(world=facts.make_world(7, 3, 6, n_filler=4, seed=0))], "tokens"),
        (lambda rs: [rs[0]._replace(d_ff=25)], "d_ff must be None or an integer"),
        (lambda rs: [rs[0]._replace(d_ff=-1)], "d_ff must be None or an integer"),
        (lambda rs: [], "replicas must hold at least one item"),
    ],
)
def test_train_replicas_refuses_bad_replicas(change, message):
    replicas = _replicas_for_test()
    config = tt.ModelConfig(vocab_size=replicas[0].world.vocab_size, seq_len=5, d_model=16, n_heads=2, d_ff=24)
    with pytest.raises(ValueError, match=message):
        tt.train_replicas(change(replicas), config, tt.TrainConfig(steps=2, batch_size=4, eval_every=2))
