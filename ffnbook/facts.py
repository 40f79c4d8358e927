"""A synthetic world of facts for a tiny transformer to memorise.

A *world* has ``n_subjects`` subjects, ``n_relations`` relations and
``n_objects`` objects. Every pair (subject, relation) has one object, drawn
at random from a seed: "subject 3, relation 1 → object 7". Nothing links the
object to the pair's names, so the only way to answer is to have stored the
fact.

A *prompt* writes one fact's question as a short token sequence: the subject
token and the relation token (in that order) at random positions among random
filler tokens, then the query token ``→``. The model must predict the object
at the ``→``. Objects never occur inside prompts, so the answer cannot be
copied from the context; and because the subject and relation move around,
the model must also find them before it can look the fact up::

    w5 s3 w0 w7 r1 w2 →      answer: o7

Token ids: ``→`` is 0, then the fillers, subjects, relations and objects in
that order (:class:`FactWorld` has a method per kind). Everything is drawn
from NumPy generators seeded by the caller, so the same seed gives the same
world and the same prompts on every run.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._checks import as_index_array, describe, require_index, require_int, require_positive_int, require_seed
from .display import MarkdownTable

#: The query token that ends every prompt; the model answers at its position.
QUERY_TOKEN = "→"


class FactWorld(NamedTuple):
    """A table of facts, ``objects[s, r]`` = the object of subject ``s`` under relation ``r``."""

    objects: np.ndarray  #: int array of shape (n_subjects, n_relations), values in [0, n_objects)
    n_objects: int  #: how many objects exist (some may be no fact's answer)
    n_filler: int  #: how many filler tokens the prompts draw from

    @property
    def n_subjects(self) -> int:
        return int(self.objects.shape[0])

    @property
    def n_relations(self) -> int:
        return int(self.objects.shape[1])

    @property
    def n_facts(self) -> int:
        return self.n_subjects * self.n_relations

    @property
    def vocab_size(self) -> int:
        return 1 + self.n_filler + self.n_subjects + self.n_relations + self.n_objects

    def filler_token(self, i):
        """Token id of filler ``i`` (an int or an array of them, each in ``[0, n_filler)``)."""
        return 1 + as_index_array(i, "i", high=self.n_filler, what="filler ids")

    def subject_token(self, s):
        """Token id of subject ``s`` (each in ``[0, n_subjects)``)."""
        return 1 + self.n_filler + as_index_array(s, "s", high=self.n_subjects, what="subject ids")

    def relation_token(self, r):
        """Token id of relation ``r`` (each in ``[0, n_relations)``)."""
        return 1 + self.n_filler + self.n_subjects + as_index_array(r, "r", high=self.n_relations,
                                                                      what="relation ids")

    def object_token(self, o):
        """Token id of object ``o`` (each in ``[0, n_objects)``)."""
        return 1 + self.n_filler + self.n_subjects + self.n_relations + as_index_array(
            o, "o", high=self.n_objects, what="object ids")

    def object_tokens(self) -> np.ndarray:
        """Token ids of all objects, in object order."""
        return self.object_token(np.arange(self.n_objects))

    def token_names(self) -> list[str]:
        """A readable name per token id: ``→``, ``w0``…, ``s0``…, ``r0``…, ``o0``…."""
        return ([QUERY_TOKEN] + [f"w{i}" for i in range(self.n_filler)]
                + [f"s{i}" for i in range(self.n_subjects)]
                + [f"r{i}" for i in range(self.n_relations)]
                + [f"o{i}" for i in range(self.n_objects)])

    def all_facts(self) -> np.ndarray:
        """Every (subject, relation) pair, shape (n_facts, 2), subject-major."""
        s, r = np.meshgrid(np.arange(self.n_subjects), np.arange(self.n_relations), indexing="ij")
        return np.stack([s.ravel(), r.ravel()], axis=1)

    def answers(self, facts) -> np.ndarray:
        """The object of each (subject, relation) row of ``facts``."""
        facts = check_facts(self, facts)
        return self.objects[facts[:, 0], facts[:, 1]]


def make_world(n_subjects: int, n_relations: int, n_objects: int, *, n_filler: int = 16,
               seed: int = 0) -> FactWorld:
    """A world whose every (subject, relation) gets an object drawn uniformly at random.

    >>> w = make_world(4, 2, 5, seed=0)
    >>> w.objects.shape, w.n_facts, w.vocab_size
    ((4, 2), 8, 28)
    >>> bool(np.array_equal(w.objects, make_world(4, 2, 5, seed=0).objects))
    True
    """
    n_subjects = require_positive_int(n_subjects, "n_subjects")
    n_relations = require_positive_int(n_relations, "n_relations")
    n_objects = require_positive_int(n_objects, "n_objects")
    n_filler = require_positive_int(n_filler, "n_filler")
    if n_objects < 2:
        raise ValueError(f"n_objects must be at least 2, or every answer is the same; got {n_objects}")
    rng = np.random.default_rng(require_seed(seed))
    objects = rng.integers(0, n_objects, size=(n_subjects, n_relations))
    return FactWorld(objects=objects, n_objects=n_objects, n_filler=n_filler)


def check_facts(world: FactWorld, facts, name: str = "facts") -> np.ndarray:
    """``facts`` as an int array of (subject, relation) rows that exist in ``world``; errors name ``name``."""
    check_world(world)
    _refuse_text(facts, name)
    facts = np.asarray(facts)
    if facts.ndim != 2 or facts.shape[1] != 2 or facts.shape[0] == 0:
        raise ValueError(f"{name} must have shape (n_facts, 2) with at least one row, got {facts.shape}")
    if not np.issubdtype(facts.dtype, np.integer):
        raise TypeError(f"{name} must hold integer (subject, relation) ids, got dtype {facts.dtype}")
    limits = (world.n_subjects, world.n_relations)
    for column, (kind, limit) in enumerate(zip(("subject", "relation"), limits)):
        bad = (facts[:, column] < 0) | (facts[:, column] >= limit)
        if bad.any():
            raise ValueError(f"{name} must hold {kind} ids in [0, {limit}), got {facts[bad, column][0]}")
    return facts


def check_world(world, name: str = "world") -> FactWorld:
    """``world`` if it is a :class:`FactWorld` (from :func:`make_world`), else TypeError."""
    if not isinstance(world, FactWorld):
        raise TypeError(f"{name} must be a FactWorld from ffnbook.facts.make_world, got {describe(world)}")
    return world


def _refuse_text(value, name: str) -> None:
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{name} must be an integer array, got {describe(value)}")


class FactSplit(NamedTuple):
    """Facts the model trains on and facts it never sees, as (subject, relation) rows."""

    train: np.ndarray
    held_out: np.ndarray


def split_facts(world: FactWorld, n_held_out: int, *, seed: int = 0) -> FactSplit:
    """Hold ``n_held_out`` facts back from training, chosen at random; no fact is in both parts.

    The held-out facts measure what a model can *infer* about facts it never
    saw: with objects drawn at random, nothing better than chance.

    >>> w = make_world(5, 2, 4, seed=0)
    >>> split = split_facts(w, 3, seed=0)
    >>> len(split.train), len(split.held_out)
    (7, 3)
    """
    check_world(world)
    n_held_out = require_int(n_held_out, "n_held_out", minimum=0, maximum=world.n_facts - 1,
                             expected=f"an integer in [0, {world.n_facts})")
    order = np.random.default_rng(require_seed(seed)).permutation(world.n_facts)
    facts = world.all_facts()
    held = np.sort(order[:n_held_out])
    train = np.sort(order[n_held_out:])
    return FactSplit(train=facts[train], held_out=facts[held])


class Prompts(NamedTuple):
    """A batch of prompts, their answers and where the subject and relation sit."""

    tokens: np.ndarray  #: int64 array (n, seq_len); the last token of every row is ``→``
    answers: np.ndarray  #: int64 array (n,), the object token id to predict at the last position
    facts: np.ndarray  #: int array (n, 2), the (subject, relation) each prompt asks about
    subject_position: np.ndarray  #: int array (n,)
    relation_position: np.ndarray  #: int array (n,)


def make_prompts(world: FactWorld, facts, seq_len: int, rng: np.random.Generator) -> Prompts:
    """One prompt per row of ``facts``, each in fresh random filler.

    The subject and relation take two random slots among the first
    ``seq_len - 1`` positions (subject first); every other slot gets a random
    filler token; the last position is ``→``.

    >>> w = make_world(3, 2, 4, n_filler=5, seed=0)
    >>> p = make_prompts(w, [[1, 0]], 6, np.random.default_rng(0))
    >>> p.tokens.shape, int(p.tokens[0, -1]), int(p.answers[0]) == int(w.object_token(w.objects[1, 0]))
    ((1, 6), 0, True)
    """
    facts = check_facts(world, facts)
    seq_len = require_positive_int(seq_len, "seq_len")
    if seq_len < 3:
        raise ValueError(f"seq_len must be at least 3 (subject, relation, →), got {seq_len}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return _draw_prompts(world, facts, seq_len, rng)


def _draw_prompts(world: FactWorld, facts: np.ndarray, seq_len: int, rng: np.random.Generator) -> Prompts:
    """:func:`make_prompts` on arguments already checked (a training step draws a batch this way).

    Token ids are computed as the token methods of :class:`FactWorld` compute
    them, without their checks: every id drawn or read here is in range.
    """
    n = facts.shape[0]
    slots = seq_len - 1
    subject_0 = 1 + world.n_filler  # the first subject's token; relations and objects follow
    relation_0 = subject_0 + world.n_subjects
    tokens = 1 + rng.integers(0, world.n_filler, size=(n, seq_len)).astype(np.int64)
    # Two distinct slots per row, the earlier for the subject: sort a random pair.
    first = rng.integers(0, slots, size=n)
    second = (first + rng.integers(1, slots, size=n)) % slots
    subject_position = np.minimum(first, second)
    relation_position = np.maximum(first, second)
    rows = np.arange(n)
    tokens[rows, subject_position] = subject_0 + facts[:, 0]
    tokens[rows, relation_position] = relation_0 + facts[:, 1]
    tokens[:, -1] = 0
    answers = (relation_0 + world.n_relations + world.objects[facts[:, 0], facts[:, 1]]).astype(np.int64)
    return Prompts(tokens, answers, facts, subject_position, relation_position)


def repeat_facts(facts, n_times: int) -> np.ndarray:
    """Every fact ``n_times`` in a row: for evaluating each fact in several contexts."""
    _refuse_text(facts, "facts")
    facts = as_index_array(facts, "facts", ndim=2, what="(subject, relation) ids")
    if facts.shape[1] != 2:
        raise ValueError(f"facts must have shape (n_facts, 2), got {facts.shape}")
    n_times = require_positive_int(n_times, "n_times")
    return np.repeat(facts, n_times, axis=0)


def fact_prompts(world: FactWorld, facts, n_contexts: int, seq_len: int, *, seed: int) -> Prompts:
    """``n_contexts`` prompts per fact, each in its own random filler, grouped fact by fact.

    Row ``i * n_contexts + c`` asks about ``facts[i]``, so per-prompt
    measurements reshape to ``(n_facts, n_contexts, ...)``.

    >>> w = make_world(3, 2, 4, seed=0)
    >>> p = fact_prompts(w, w.all_facts(), 2, 5, seed=1)
    >>> p.tokens.shape, p.facts[:4].tolist()
    ((12, 5), [[0, 0], [0, 0], [0, 1], [0, 1]])
    """
    facts = check_facts(world, facts)
    n_contexts = require_positive_int(n_contexts, "n_contexts")
    return make_prompts(world, repeat_facts(facts, n_contexts), seq_len, np.random.default_rng(require_seed(seed)))


def swap_facts(world: FactWorld, prompts: Prompts, facts) -> Prompts:
    """The same prompts, same filler and same positions, asking about ``facts`` (one row per prompt) instead.

    Pairs of prompts that differ only in the fact they ask about are what
    activation patching compares.

    >>> w = make_world(3, 2, 4, n_filler=3, seed=0)
    >>> p = fact_prompts(w, [[0, 0]], 1, 5, seed=2)
    >>> q = swap_facts(w, p, [[2, 1]])
    >>> prompt_text(w, p.tokens[0]), prompt_text(w, q.tokens[0])
    ('w2 s0 w0 r0 →', 'w2 s2 w0 r1 →')
    """
    facts = check_facts(world, facts)
    if not isinstance(prompts, Prompts):
        raise TypeError(f"prompts must be Prompts (make_prompts, fact_prompts), got {describe(prompts)}")
    n = len(prompts.tokens)
    if np.asarray(prompts.tokens).max(initial=0) >= world.vocab_size:
        raise ValueError(f"prompts must be of this world: they hold token ids beyond its {world.vocab_size}")
    if facts.shape[0] != n:
        raise ValueError(f"facts must have one row per prompt ({n}), got {facts.shape[0]}")
    rows = np.arange(n)
    tokens = prompts.tokens.copy()
    tokens[rows, prompts.subject_position] = world.subject_token(facts[:, 0])
    tokens[rows, prompts.relation_position] = world.relation_token(facts[:, 1])
    answers = world.object_token(world.answers(facts)).astype(np.int64)
    return Prompts(tokens, answers, facts, prompts.subject_position.copy(), prompts.relation_position.copy())


def other_answer_facts(world: FactWorld, facts, *, seed: int) -> np.ndarray:
    """For each row of ``facts``, a row drawn at random from ``facts`` whose object is different.

    >>> w = make_world(4, 3, 5, seed=0)
    >>> f = w.all_facts()
    >>> bool(np.all(w.answers(other_answer_facts(w, f, seed=0)) != w.answers(f)))
    True
    """
    facts = check_facts(world, facts)
    seed = require_seed(seed)
    answers = world.answers(facts)
    if len(np.unique(answers)) < 2:
        raise ValueError("facts must have at least two different answers to find each one with another")
    rng = np.random.default_rng(seed)
    picks = np.empty(len(facts), dtype=np.int64)
    for i, answer in enumerate(answers):
        candidates = np.flatnonzero(answers != answer)
        picks[i] = candidates[rng.integers(0, len(candidates))]
    return facts[picks]


def prompt_text(world: FactWorld, tokens, answer=None) -> str:
    """A prompt as readable text, e.g. ``"w5 s3 w0 r1 →  o7"``.

    >>> w = make_world(2, 1, 3, n_filler=2, seed=0)
    >>> prompt_text(w, [1, 3, 5, 0], answer=6)
    'w0 s0 r0 → o0'
    """
    names = check_world(world).token_names()
    _refuse_text(tokens, "tokens")
    tokens = [int(t) for t in as_index_array(tokens, "tokens", high=len(names), what="token ids").ravel()]
    text = " ".join(names[t] for t in tokens)
    if answer is None:
        return text
    return f"{text} {names[require_index(answer, 'answer', len(names), of='the token ids')]}"


def prompt_table(world: FactWorld, prompts: Prompts, n_rows: int = 4) -> MarkdownTable:
    """The first ``n_rows`` prompts as a table: the tokens, the fact asked and the answer."""
    check_world(world)
    if not isinstance(prompts, Prompts):
        raise TypeError(f"prompts must be Prompts from ffnbook.facts.make_prompts, got {describe(prompts)}")
    n_rows = min(require_positive_int(n_rows, "n_rows"), len(prompts.tokens))
    names = world.token_names()
    rows = [{"prompt": prompt_text(world, prompts.tokens[i]),
             "fact": f"s{prompts.facts[i, 0]}, r{prompts.facts[i, 1]}",
             "answer": names[int(prompts.answers[i])]} for i in range(n_rows)]
    return MarkdownTable(rows, [("prompt", "prompt", "s"), ("fact asked", "fact", "s"),
                                ("answer", "answer", "s")])
