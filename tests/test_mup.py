"""One Adam step on W2 at several widths, against torch's own Adam."""

from __future__ import annotations

import numpy as np
import pytest

from ffnbook import mup

torch = pytest.importorskip("torch")


def torch_first_step(d_model: int, d_ff: int, learning_rate: float, n_tokens: int = 64, seed: int = 0) -> float:
    """The same FFN, data and loss as ffnbook.mup, stepped by torch.optim.Adam: the output's RMS change."""
    rng = np.random.default_rng(seed)
    x = torch.tensor(rng.standard_normal((n_tokens, d_model)))
    target = torch.tensor(rng.standard_normal((n_tokens, d_model)))
    W1 = torch.tensor(rng.standard_normal((d_model, d_ff)) / np.sqrt(d_model))
    W2 = torch.nn.Parameter(torch.tensor(rng.standard_normal((d_ff, d_model)) / np.sqrt(d_ff)))
    hidden = torch.relu(x @ W1)
    before = (hidden @ W2).detach().clone()
    optimizer = torch.optim.Adam([W2], lr=learning_rate)
    loss = 0.5 * ((hidden @ W2 - target) ** 2).sum() / n_tokens
    loss.backward()
    optimizer.step()
    return float(((hidden @ W2).detach() - before).pow(2).mean().sqrt())


@pytest.mark.parametrize("d_ff", [32, 256, 2048])
def test_the_step_is_adams(d_ff):
    ours = mup.first_step_output_change(16, d_ff, 1e-3)
    assert ours.output_change == pytest.approx(torch_first_step(16, d_ff, 1e-3), rel=1e-6)
    assert ours.weight_change == pytest.approx(1e-3, rel=1e-4)  # every entry moves by the learning rate


def test_the_change_grows_with_width_unless_the_rate_shrinks():
    widths = [256, 512, 1024, 2048, 4096]
    standard = mup.width_sweep(32, widths, 1e-3, mup=False)
    scaled = mup.width_sweep(32, widths, 1e-3, mup=True)
    growth = [r.output_change / standard[0].output_change for r in standard]
    assert growth == pytest.approx([w / widths[0] for w in widths], rel=0.15)  # proportional to width
    flat = [r.output_change / scaled[0].output_change for r in scaled]
    assert max(flat) < 1.15 and min(flat) > 0.85  # the same at every width
    assert [r.learning_rate for r in scaled] == pytest.approx([1e-3 * widths[0] / w for w in widths])


def test_clear_errors():
    with pytest.raises(ValueError, match="learning_rate"):
        mup.first_step_output_change(4, 8, 0.0)
    with pytest.raises(ValueError, match="widths"):
        mup.width_sweep(4, [], 1e-3, mup=True)
