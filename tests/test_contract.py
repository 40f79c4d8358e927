"""Every public function, class and method of ffnbook keeps its input contract, tested by generation.

For each parameter of each public callable (walked from the package, kinds
declared in ``contract_spec.py``) the test feeds bad values and requires a
``TypeError`` or ``ValueError`` that names the parameter:

* ``test_catalogue``: the fixed catalogue of the parameter's kind (bad values
  refused clearly; edge values refused clearly or accepted, never an obscure
  failure or a hang; equivalent values, such as a list for an array or an int
  array for a float one, give the reference's result); ``make check`` runs
  the bad values only;
* ``test_generated``: for each callable, Hypothesis draws a parameter and a
  bad value from its kind's strategy, as many times as the profile allows
  (``make check``: a few per callable; ``make test``: more; see conftest.py).

``test_valid_call`` makes sure every callable is declared and its valid call
works, so a new public function cannot slip past the contract unseen.
"""

from __future__ import annotations

import functools

import pytest
from contract import is_record, judge, parameters, probe_values, public_callables, refusal, run, warm_up
from contract_spec import CASES as DECLARED
from contract_spec import RECORDS, SpecError, resolve
from hypothesis import given
from hypothesis import strategies as st

import ffnbook

CALLABLES = public_callables(ffnbook)
#: NamedTuples not declared in contract_spec.CASES are records, checked where they are read.
CHECKED = sorted(q for q, obj in CALLABLES.items() if q in DECLARED or not is_record(obj))


@pytest.fixture(scope="module", autouse=True)
def _imports_done():
    """Lazy imports (torch._dynamo, pyplot...) happen here, never inside a call's time limit."""
    warm_up()


@pytest.fixture
def roles(request) -> tuple:
    """The catalogue's roles: all under `make test`; the bad values alone under `make check`."""
    quick = request.config.getoption("hypothesis_profile", None) == "check"
    return ("bad",) if quick else ("bad", "edge", "same")


@functools.cache
def resolved(qualname):
    try:
        return resolve(qualname, CALLABLES[qualname])
    except SpecError as error:
        pytest.fail(str(error))


def _params(qualname):
    obj = CALLABLES[qualname]
    target = getattr(obj, "forward", obj) if qualname.endswith(".forward") else obj
    return [p.name for p in parameters(target)]


CASES = [(q, p) for q in CHECKED for p in _params(q)]


@pytest.mark.parametrize("qualname", CHECKED)
def test_valid_call(qualname):
    """Declared, and the valid call returns (records are checked where they are read)."""
    r = resolved(qualname)
    if r is None:
        pytest.skip(RECORDS)
    outcome = run(lambda: r.target()(**r.args()), r.seconds)
    assert outcome.error is None, f"{qualname}'s valid call failed: {type(outcome.error).__name__}: {outcome.error}"


def _param(qualname, name):
    r = resolved(qualname)
    if r is None:
        pytest.skip(RECORDS)
    for p, kind, names in r.params:
        if p == name:
            return r, kind, names
    pytest.skip(f"{name}: {r.left_out.get(name, 'not generated')}")


@pytest.mark.parametrize("qualname, name", CASES, ids=[f"{q.removeprefix('ffnbook.')}-{p}" for q, p in CASES])
def test_catalogue(qualname, name, roles):
    r, kind, names = _param(qualname, name)
    valid = r.args()[name]
    if not r.deterministic:  # timings, random initialisations: two calls never agree
        roles = tuple(role for role in roles if role != "same")
    failures = []
    for role, label, value, reference in probe_values(kind, valid, roles):
        verdict, detail = judge(r, name, names, role, value, reference)
        if verdict != {"bad": "clear", "edge": "ok", "same": "correct"}[role]:
            failures.append(f"{name}={label} ({role}): {verdict}: {detail}")
    assert not failures, f"{qualname}:\n" + "\n".join(failures)


GENERATED = [q for q in CHECKED if _params(q)]


@pytest.mark.parametrize("qualname", GENERATED, ids=[q.removeprefix("ffnbook.") for q in GENERATED])
@given(data=st.data())
def test_generated(qualname, data):
    """Hypothesis draws one of the callable's parameters, then a bad value of its kind."""
    r = resolved(qualname)
    if r is None or not r.params:
        pytest.skip(RECORDS if r is None else "no generated parameter")
    name, kind, names = data.draw(st.sampled_from(r.params), label="parameter")
    value = data.draw(kind.strategy(r.args()[name]), label=name)
    args = r.args()
    args[name] = value
    outcome = run(lambda: r.target()(**args), r.seconds)
    verdict = refusal(outcome, names)
    assert verdict == "clear", f"{qualname}({name}={value!r}): {verdict}: " + (
        f"{type(outcome.error).__name__}: {outcome.error}" if outcome.error else f"returned {outcome.value!r}"[:300]
    )
