"""Issue 38, findings 3 and 5: prange loops that race in the user's code run serially with a
`RaceWarning` at the racing statement (and race-free ones stay parallel); an error out of numba's
compiled code is never bare."""

from __future__ import annotations

import dataclasses
import inspect
import warnings

import checkpointing
import findings
import idioms
import numpy as np
import outsiders_prange as op
import parallel_kernels
import pytest
import stencils
from numba import prange
from numeric import assert_close

import sourcead
from benchmarks import gradbench_workloads
from sourcead.errors import numba_failure
from sourcead.frontend.bound_names import local_names
from sourcead.frontend.fence import fence
from sourcead.frontend.normalize import normalize
from sourcead.frontend.parse import parse_function
from sourcead.ir.core import For, walk_statements
from sourcead.ir.naming import Namer
from sourcead.pipeline.driver import generate
from sourcead.transforms.races import serialize_races


def _line_of(func, text: str) -> int:
    lines, first = inspect.getsourcelines(func)
    return first + next(k for k, line in enumerate(lines) if text in line)


def _race_warnings(func, wrt: tuple[str, ...], mode: str = "reverse") -> tuple[list, str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        source = generate(func, mode, wrt).source
    return [w for w in caught if issubclass(w.category, sourcead.RaceWarning)], source


RACES = [
    (op.prange_histogram, "y[idx[i]] += x[i] ** 2", "`y` is written at an index other than the loop variable `i`"),
    (op.prange_product, "p = p * x[i]", "`p` is read before it is assigned in an iteration"),
    (op.prange_running_sum, "s += x[i]", "`s` is accumulated and also read in the loop body"),
    (op.prange_recurrence, "y[i] = 0.5 * y[i - 1] + x[i]", "`y` is written at `y[i]` and read at another element"),
    (op.prange_last_value, "t = x[i] * x[i]", "`t` is assigned in every iteration and read after the loop"),
]


@pytest.mark.parametrize(("func", "statement", "reason"), RACES, ids=[r[0].__name__ for r in RACES])
def test_a_racing_prange_loop_runs_serially_with_a_warning_at_its_statement(func, statement, reason):
    for mode in ("forward", "reverse"):
        found, source = _race_warnings(func, ("x",), mode)
        assert len(found) == 1
        w = found[0]
        assert (w.filename, w.lineno) == (inspect.getsourcefile(func), _line_of(func, statement))
        message = str(w.message)
        assert reason in message
        assert "so sourcead runs it serially" in message and "Write `range` to say so" in message
        assert "prange(" not in source
        assert f"# a prange loop run serially: {reason}" in source


def test_the_histogram_of_the_finding_is_right_and_the_same_on_every_call_with_numba():
    rng = np.random.default_rng(38)
    x, idx = rng.standard_normal(4000), rng.integers(0, 3, size=4000)
    y = np.bincount(idx, weights=x**2, minlength=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sourcead.RaceWarning)
        value_and_grad = sourcead.value_and_grad(op.prange_histogram, wrt="x")
    for _ in range(5):
        value, g = value_and_grad(x, idx, 3)
        assert_close(value, float(np.sum(y * y)), 1e-12, 0)
        assert_close(g, 4.0 * y[idx] * x, 1e-12, 0)


# race-free writes the analysis must prove: a shifted index, the loop variable on another axis, an
# element read where the iteration writes it, a private scalar and scratch array, a reduction
def shifted_write(x):
    y = np.zeros(x.shape[0] + 1)
    for i in prange(x.shape[0]):
        y[i + 1] = x[i] * x[i]
    return np.sum(y * y)


def reversed_write(x):
    n = x.shape[0]
    y = np.zeros(2 * n)
    for i in prange(n):
        y[2 * (n - 1 - i)] = x[i] * x[i]
    return np.sum(y * y)


def column_writes(A):
    out = np.zeros((A.shape[1], A.shape[0]))
    for i in prange(A.shape[0]):
        for j in range(A.shape[1]):
            out[j, i] = A[i, j] * out.shape[0]
    return np.sum(out * out)


def in_place_rows(A):
    B = A.copy()
    total = 0.0
    for i in prange(B.shape[0]):
        t = B[i, 0] * 2.0
        row = np.empty(B.shape[1])
        for j in range(B.shape[1]):
            row[j] = np.sin(B[i, j]) + t
            B[i, j] = B[i, j] * row[j]
        total += np.sum(B[i, :])
    return total + np.sum(B * B)


@pytest.mark.parametrize("func", [shifted_write, reversed_write, column_writes, in_place_rows])
def test_race_free_writes_stay_parallel_without_a_warning(func):
    found, source = _race_warnings(func, (next(iter(inspect.signature(func).parameters)),), "forward")
    assert found == []
    assert "prange(" in source


def _races_in(func) -> tuple[int, list[str]]:
    """The prange loops of `func` in core form, and the RaceWarnings `serialize_races` gives."""
    parsed = parse_function(func)
    fence(parsed)
    core = normalize(parsed, Namer(local_names(parsed.node) | set(parsed.globals)))
    loops = sum(1 for s in walk_statements(core.body) if isinstance(s, For) and s.parallel)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        serialize_races(core, parsed.locate)
    return loops, [str(w.message) for w in caught if issubclass(w.category, sourcead.RaceWarning)]


def test_no_prange_loop_of_the_test_kernels_and_benchmarks_is_taken_for_a_race():
    # every prange loop that the zoo, test_parallel and the benchmarks differentiate today (26), but
    # permuted_writes (a permutation sourcead cannot tell from an index array with repeats)
    modules = (parallel_kernels, stencils, findings, idioms, checkpointing, gradbench_workloads)
    checked = 0
    for module in modules:
        for name, func in vars(module).items():
            if not inspect.isfunction(func) or func.__module__ != module.__name__ or name == "permuted_writes":
                continue
            if "prange(" not in inspect.getsource(func):
                continue
            loops, races = _races_in(func)
            assert races == [], f"{module.__name__}.{name}"
            checked += loops
    assert checked >= 25


def test_a_permutation_write_runs_serially_with_a_warning_and_keeps_its_gradient():
    found, source = _race_warnings(parallel_kernels.permuted_writes, ("x",))
    assert len(found) == 1 and "`y` is written at an index other than the loop variable" in str(found[0].message)
    assert "prange(" not in source


# finding 5: the bare AssertionError of numba's run-time checks


def test_an_assertion_out_of_compiled_code_is_a_sourcead_error_saying_it_is_a_bug(monkeypatch):
    gradient = sourcead.grad(op.prange_beside_whole_record, wrt="x")
    x = np.linspace(0.1, 1.0, 5)
    expected = gradient(x, 0.5, 4)
    (key, variant), *_ = gradient._variants.items()

    def failing(*args):
        raise AssertionError("Sizes of tape.1, $350call.33 do not match")

    gradient._variants[key] = dataclasses.replace(variant, call=failing)
    with pytest.raises(sourcead.SourceADError) as info:
        gradient(x, 0.5, 4)
    assert not isinstance(info.value, AssertionError)
    assert info.value.message.startswith("numba's run-time check failed in the generated code ")
    assert info.value.message.endswith(": Sizes of tape.1, $350call.33 do not match")
    assert "sourcead limitation or bug" in info.value.hint
    gradient._variants[key] = variant
    assert_close(gradient(x, 0.5, 4), expected, 0, 0)


def test_numba_failures_name_what_failed():
    compiled = numba_failure(AssertionError(), "the batch loop over m.py")
    assert compiled.message == "numba's run-time check failed in the batch loop over m.py: AssertionError"
    typing = numba_failure(ValueError("first line\nsecond"), "the generated code m.py")
    assert typing.message == "numba could not compile the generated code m.py: first line"
