"""A loop's per-element records of one contiguous block are recorded and restored as block copies
(the pass `block_records`, `postpass/block_records.py`).

Pinned: heat's copy-back loop, a recurrence reading the element before, two swapped buffers, a
prange stencil's inner loop and a while loop's stencil record one block per loop and (where the
reversed body touches adjoints only) restore one; loops of other shapes keep their per-element
records (a negative first index, a step of 2, two stores, a reversed body reading a primal array
or leaving the loop). Checked: the derivatives against central
differences and forward mode (`check_derivative`, with and without numba), at trip counts 0, 1, 2
and more, and under checkpointing (`memory=`) against central differences.
"""

from __future__ import annotations

import libcst as cst
import numpy as np
import pytest

import sourcead
from benchmarks.pairs import diffusion_loop
from benchmarks.workloads import heat_swap, heat_while
from examples.heat import heat_loss
from sourcead.postpass.block_records import block_records

BLOCK = "one block"


def recurrence(x, c):
    # each iteration records y[i] and reads y[i - 1], which the iteration before wrote
    y = x.copy()
    for i in range(1, y.shape[0]):
        y[i] = y[i] * y[i - 1] + c
    s = 0.0
    for i in range(y.shape[0]):
        s += y[i] * y[i]
    return s


def nested_steps(u0, kappa, n_outer, n_inner):
    # nested time loops around the copy-back, both with runtime trip counts
    n = u0.shape[0]
    u = u0.copy()
    v = np.zeros(n)
    for _a in range(n_outer):
        for _b in range(n_inner):
            for i in range(1, n - 1):
                v[i] = u[i] + kappa * (u[i - 1] - 2.0 * u[i] + u[i + 1])
            for i in range(1, n - 1):
                u[i] = v[i] * v[i]
    s = 0.0
    for i in range(n):
        s += u[i] * u[i]
    return s


def _stencil(n, steps):
    x = np.linspace(0.0, 1.0, n)
    return np.sin(np.pi * x) + 0.3 * np.cos(5.0 * x) + 0.1, 0.3, steps


def _diffusion(n, steps):
    x = np.linspace(0.0, 1.0, n)
    return np.outer(np.sin(np.pi * x) + 0.2, np.cos(2.0 * x)), 0.2, steps


CASES = {
    "heat": (heat_loss, lambda n, s: _stencil(n, s), ("u0", "kappa")),
    "heat_swap": (heat_swap, lambda n, s: _stencil(n, s), ("u0", "kappa")),
    "heat_while": (heat_while, lambda n, s: _stencil(n, s), ("u0", "kappa")),
    "diffusion_2d": (diffusion_loop, _diffusion, ("u0", "kappa")),
    "recurrence": (recurrence, lambda n, s: (0.5 + 0.1 * np.arange(float(n)), 0.2), ("x", "c")),
    "nested": (nested_steps, lambda n, s: (*_stencil(n, s)[:2], s, 2), ("u0", "kappa")),
}


def _source(name):
    f, _, wrt = CASES[name]
    return sourcead.grad(f, wrt=wrt, jit=False).source


@pytest.mark.parametrize("name", ["heat", "heat_swap", "diffusion_2d", "nested"])
def test_a_copy_back_records_and_restores_one_block(name):
    forward, reverse = _source(name).split("# reverse sweep", 1)
    assert f"{BLOCK} of the elements it overwrites" in forward
    assert "np.uint64(top)] = u[i]" not in forward and "np.uint64(top)] = v[i]" not in forward
    assert f"elements the loop overwrote: {BLOCK}" in reverse


def test_a_recurrence_and_a_while_loop_record_one_block():
    for name in ("recurrence", "heat_while"):
        assert f"{BLOCK} of the elements it overwrites" in _source(name).split("# reverse sweep", 1)[0]


# trip counts of the recording loop: n - 2 = -1, 0, 1, 2 and more; steps 0, 1, 2 and more
SIZES = [(1, 2), (2, 2), (3, 1), (4, 2), (7, 3), (9, 0)]


@pytest.mark.parametrize("jit", [True, False])
@pytest.mark.parametrize("name", sorted(CASES))
def test_derivatives_against_differences_and_forward_mode(name, jit):
    f, make_args, wrt = CASES[name]
    sizes = SIZES if not jit else [(2, 2), (3, 1), (7, 3)]  # compiled: one module, a few sizes
    if name == "diffusion_2d":
        sizes = [(3, 1), (5, 2)]
    for n, steps in sizes:
        if name == "recurrence" and n < 2:
            continue
        report = sourcead.check_derivative(f, *make_args(n, steps), wrt=wrt, jit=jit)
        assert report.ok, (n, steps, report)


def _central_differences(f, args, h=1e-6):
    u0, kappa, steps = args
    du = np.zeros_like(u0)
    for k in range(u0.size):
        e = np.zeros_like(u0)
        e[k] = h
        du[k] = (f(u0 + e, kappa, steps) - f(u0 - e, kappa, steps)) / (2.0 * h)
    dk = (f(u0, kappa + h, steps) - f(u0, kappa - h, steps)) / (2.0 * h)
    return du, dk


@pytest.mark.parametrize("jit", [True, False])
def test_checkpointed_time_loop_with_block_records(jit):
    args = _stencil(8, 9)
    state = 2 * 8 * 8 + 16
    gradient = sourcead.grad(heat_swap, wrt=("u0", "kappa"), jit=jit, memory=3 * state)
    assert BLOCK in gradient.source
    du, dk = gradient(*args)
    ref_u, ref_k = _central_differences(heat_swap, args)
    np.testing.assert_allclose(du, ref_u, rtol=1e-6, atol=1e-8)
    assert dk == pytest.approx(ref_k, rel=1e-6, abs=1e-8)


ADJOINTS = frozenset({"u_bar", "v_bar"})


def _rewritten(loop: str) -> bool:
    text = "def f_vjp(u, v, tape, top, n, out_bar):\n" + loop
    tree, changed = block_records(cst.parse_module(text), ADJOINTS)
    new = tree.code
    assert changed == (BLOCK in new)
    return changed


def test_the_shapes_it_rewrites_and_the_ones_it_keeps():
    record = "        tape[np.uint64(top)] = u[{i}]\n        top += 1\n        u[{i}] = v[{i}]\n"
    assert _rewritten("    for i in range(1, n - 1):\n" + record.format(i="i"))
    assert _rewritten("    for i in range(1, n):\n" + record.format(i="i - 1"))
    assert _rewritten("    for i in range(1, n):\n" + record.format(i="i").replace("] = v[i]", "] += v[i]"))
    assert not _rewritten("    for i in range(0, n):\n" + record.format(i="i - 1"))  # u[-1] wraps
    assert not _rewritten("    for i in range(1, n, 2):\n" + record.format(i="i"))  # not contiguous
    assert not _rewritten("    for i in range(k, n):\n" + record.format(i="i"))  # first index unknown
    assert not _rewritten("    for i in range(1, n):\n" + record.format(i="2 * i"))
    assert not _rewritten("    for i in range(1, n):\n" + record.format(i="i") + "        u[i + 1] = 0.0\n")
    assert not _rewritten("    for i in range(1, n):\n" + record.format(i="i").replace("= v[i]", "= tape[i]"))
    restore = "        top_at = top + i - 1 + 1\n        top_at -= 1\n        u[i] = tape[np.uint64(top_at)]\n"
    assert _rewritten("    for i in range(1, n - 1):\n" + restore + "        v_bar[i] += u_bar[i]\n")
    popped = "        top -= 1\n        u[i] = tape[np.uint64(top)]\n"
    assert _rewritten("    for i in range(n - 2, 0, -1):\n" + popped + "        v_bar[i] = 0.0\n")
    # the reversed body reads a primal array (which the restores change), or leaves the loop
    assert not _rewritten("    for i in range(n - 2, 0, -1):\n" + popped + "        v_bar[i] += u[i + 1]\n")
    assert not _rewritten("    for i in range(n - 2, 0, -1):\n" + popped + "        v_bar[i] += w[i]\n")
    assert not _rewritten(
        "    for i in range(n - 2, 0, -1):\n" + popped + "        if v_bar[i] > 0.0:\n            break\n"
    )
    assert not _rewritten("    for i in range(n - 2, 0, -1):\n" + popped + "        v_bar[i] = f(v)\n")


def test_the_blocks_hold_what_the_elements_held():
    # the rewritten text run as Python: the same tape and the same restored array as the original
    loop = (
        "def f_vjp(u, v, tape, top, n, out_bar):\n"
        "    for i in range(1, n - 1):\n"
        "        tape[np.uint64(top)] = u[i]\n"
        "        top += 1\n"
        "        u[i] = v[i] + u[i - 1]\n"
        "    for i in range(n - 2, 0, -1):\n"
        "        top -= 1\n"
        "        u[i] = tape[np.uint64(top)]\n"
        "    return u, tape, top\n"
    )
    tree, changed = block_records(cst.parse_module(loop), ADJOINTS)
    new = tree.code
    assert changed and new.count(BLOCK) == 2
    for n in (0, 1, 2, 3, 6):
        results = []
        for text in (loop, new):
            scope: dict = {"np": np}
            exec(text, scope)  # noqa: S102 - the pass's own output, built above
            u = np.arange(float(max(n, 1)))[:n] + 1.0
            results.append(scope["f_vjp"](u, 2.0 * u, np.full(8, -1.0), 1, n, 1.0))
        (u_a, tape_a, top_a), (u_b, tape_b, top_b) = results
        np.testing.assert_array_equal(u_a, u_b)
        np.testing.assert_array_equal(tape_a, tape_b)
        assert top_a == top_b == 1
