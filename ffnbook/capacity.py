"""How much a model can store, in bits: facts against parameters.

Allen-Zhu and Li (2025) measure knowledge in bits: a fact whose answer is one
of ``n`` equally likely objects, drawn at random, carries ``log2 n`` bits,
which no model can store in fewer. Their models, trained on such facts, hold
at most about two bits per parameter. These functions turn facts into bits
and parameters into facts, so that the book's counts of facts per unit can be
set beside that figure. They count a recalled fact as all of its bits; the
paper's own measure is a bound from the model's loss, which credits a
partly-right answer with part of them.
"""

from __future__ import annotations

import math

from ._checks import require_nonnegative_int, require_number, require_positive_int

#: Allen-Zhu and Li (2025, abstract); language models "can and only can store 2 bits of
#: knowledge per parameter", the peak ratio of their controlled experiments...
BITS_PER_PARAMETER = 2.0
#: ...reached when each fact is seen this many times in training (Figure 1 of the paper)...
EXPOSURES = 1000
#: ...and with this many exposures, about this many bits per parameter.
FEW_EXPOSURES, BITS_AT_FEW_EXPOSURES = 100, 1.0


def bits_per_fact(n_objects) -> float:
    """Bits in a fact whose answer is one of ``n_objects`` equally likely objects: ``log2 n_objects``.

    >>> bits_per_fact(32)
    5.0
    """
    return math.log2(require_positive_int(n_objects, "n_objects"))


def knowledge_bits(n_facts, n_objects) -> float:
    """Bits in ``n_facts`` independent facts, each an answer among ``n_objects``.

    >>> knowledge_bits(1000, 32)
    5000.0
    """
    return require_nonnegative_int(n_facts, "n_facts") * bits_per_fact(n_objects)


def bits_per_parameter(n_facts, n_objects, n_params) -> float:
    """Bits of ``n_facts`` facts (answers among ``n_objects``) per parameter of a model of ``n_params``.

    >>> bits_per_parameter(1000, 32, 2500)
    2.0
    """
    return knowledge_bits(n_facts, n_objects) / require_positive_int(n_params, "n_params")


def facts_at_capacity(n_params, n_objects, bits_per_param: float = BITS_PER_PARAMETER) -> float:
    """How many such facts ``n_params`` parameters hold at ``bits_per_param`` bits each parameter.

    >>> facts_at_capacity(2500, 32)
    1000.0
    """
    n_params = require_positive_int(n_params, "n_params")
    bits_per_param = require_number(bits_per_param, "bits_per_param", low=0, low_open=True)
    return n_params * bits_per_param / bits_per_fact(n_objects)
