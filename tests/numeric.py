"""Numeric checking helpers: finite differences, random directions, inner products, closeness.

Values are floats, float64 arrays, or tuples of them (the structures sourcead's jvp/vjp take
and return); every helper here walks such a structure.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence

import numpy as np


def _map(fn: Callable, *trees):
    """Apply fn leaf by leaf to trees of the same structure (tuples of floats/arrays)."""
    if any(isinstance(t, tuple) for t in trees):
        if any(not isinstance(t, tuple) or len(t) != len(trees[0]) for t in trees):
            raise AssertionError(f"structures differ: {[type(t).__name__ for t in trees]}")
        return tuple(_map(fn, *parts) for parts in zip(*trees, strict=True))
    return fn(*trees)


def leaves(tree) -> list:
    """The floats and arrays of a tree, in order."""
    if isinstance(tree, tuple):
        return [leaf for part in tree for leaf in leaves(part)]
    return [tree]


def argument_index(f: Callable, name: str) -> int:
    """Position of the parameter called name in f's signature."""
    return list(inspect.signature(f).parameters).index(name)


def central_difference_jvp(f: Callable, args: tuple, wrt_names: Sequence[str], tangents: Sequence, eps: float = 1e-6):
    """(f(args + eps*t) - f(args - eps*t)) / (2*eps) along tangents for the wrt_names arguments."""

    def shifted(sign: float) -> list:
        moved = list(args)
        for name, tangent in zip(wrt_names, tangents, strict=True):
            index = argument_index(f, name)
            moved[index] = _shift(args[index], tangent, sign * eps)
        return moved

    plus, minus = f(*shifted(1.0)), f(*shifted(-1.0))
    return _map(lambda p, m: _as_output(p, (np.asarray(p) - np.asarray(m)) / (2.0 * eps)), plus, minus)


def _shift(value, tangent, step: float):
    if isinstance(value, np.ndarray):
        return value + step * np.asarray(tangent)  # a new array: the caller's args stay untouched
    return float(value) + step * float(tangent)


def _as_output(template, value):
    return value.copy() if isinstance(template, np.ndarray) else float(value)


def finite_difference_gradient(f: Callable, args: tuple, wrt_names: Sequence[str], eps: float = 1e-6) -> tuple:
    """Full gradient of a scalar f w.r.t. each wrt argument, one central difference per element."""
    grads = []
    for name in wrt_names:
        value = args[argument_index(f, name)]
        if not isinstance(value, np.ndarray):
            grads.append(_single_direction(f, args, wrt_names, name, 1.0, eps))
            continue
        grad = np.zeros(value.shape)
        for position in np.ndindex(value.shape):
            unit = np.zeros(value.shape)
            unit[position] = 1.0
            grad[position] = _single_direction(f, args, wrt_names, name, unit, eps)
        grads.append(grad)
    return tuple(grads)


def sampled_difference_gradient(
    f: Callable, args: tuple, wrt_names: Sequence[str], at_most: int, eps: float = 1e-6, seed: int = 0
) -> tuple:
    """Central differences of a scalar f at up to `at_most` elements of each wrt array (all of a
    smaller one; a seeded sample of a larger one, lenet's 12 000 weights): one (expected, where)
    pair per wrt name, `where` the flat positions differenced (None for a float)."""
    rng = np.random.default_rng(seed)
    pairs = []
    for name in wrt_names:
        value = args[argument_index(f, name)]
        if not isinstance(value, np.ndarray):
            pairs.append((_single_direction(f, args, wrt_names, name, 1.0, eps), None))
            continue
        where = (
            np.arange(value.size) if value.size <= at_most else np.sort(rng.choice(value.size, at_most, replace=False))
        )
        expected = np.empty(where.size)
        for k, flat in enumerate(where):
            unit = np.zeros(value.size)
            unit[flat] = 1.0
            expected[k] = _single_direction(f, args, wrt_names, name, unit.reshape(value.shape), eps)
        pairs.append((expected, where))
    return tuple(pairs)


def _single_direction(
    f: Callable, args: tuple, wrt_names: Sequence[str], name: str, direction, eps: float = 1e-6
) -> float:
    tangents = [direction if other == name else zero_like(args[argument_index(f, other)]) for other in wrt_names]
    return float(central_difference_jvp(f, args, wrt_names, tangents, eps))


def random_like(rng: np.random.Generator, value):
    """A standard-normal float or float64 array (or tuple of them) with value's structure."""

    def draw(leaf):
        if isinstance(leaf, np.ndarray):
            return rng.standard_normal(leaf.shape)
        return float(rng.standard_normal())

    return _map(draw, value)


def copy_tree(value):
    """value with every array copied, so a callee's writes cannot reach the original."""
    return _map(lambda leaf: leaf.copy() if isinstance(leaf, np.ndarray) else leaf, value)


def zero_like(value):
    """0.0 or a zero float64 array (or tuple of them) with value's structure."""
    return _map(lambda leaf: np.zeros(leaf.shape) if isinstance(leaf, np.ndarray) else 0.0, value)


def vdot(a, b) -> float:
    """Euclidean inner product of two same-structured floats/arrays/tuples."""
    pieces = _map(
        lambda x, y: float(np.sum(np.asarray(x, dtype=np.float64) * np.asarray(y, dtype=np.float64))),
        a,
        b,
    )
    return float(sum(leaves(pieces)))


def norm(a) -> float:
    """Euclidean norm of a float/array/tuple."""
    return float(np.sqrt(vdot(a, a)))


def assert_close(actual, expected, rtol: float, atol: float = 0.0) -> None:
    """Leaf by leaf, |actual - expected| <= atol + rtol * |expected| elementwise, same shapes."""

    def check(a, e):
        if isinstance(e, np.ndarray):
            if not isinstance(a, np.ndarray):
                raise AssertionError(f"expected an array of shape {e.shape}, got {type(a).__name__}")
            if a.shape != e.shape:
                raise AssertionError(f"shape {a.shape} != expected {e.shape}")
        elif isinstance(a, np.ndarray):
            raise AssertionError(f"expected a scalar, got an array of shape {a.shape}")
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)

    _map(check, actual, expected)


def assert_gradient_matches(f: Callable, args: tuple, wrt_names: Sequence[str], got, rtol=1e-6, atol=1e-8) -> None:
    """`got` (a gradient, or a tuple of one per wrt name) against central differences of f."""
    got = got if isinstance(got, tuple) else (got,)
    for g, e in zip(got, finite_difference_gradient(f, args, wrt_names), strict=True):
        assert_close(g, e, rtol=rtol, atol=atol)


def assert_compiled_equals_plain(f: Callable, args: tuple, wrt: tuple, seed: int = 1) -> None:
    """numba runs the generated text that a plain-Python check (`check_derivative(..., jit=False)`)
    vouches for; what compiling can change is typing and NumPy's semantics. So the compiled
    gradient and tangent (two compiles) must equal the plain ones, on copies of `args`."""
    import sourcead

    rng = np.random.default_rng(seed)
    tangents = tuple(random_like(rng, args[p]) for p in wrt)
    got = sourcead.grad(f, wrt=wrt, jit=True)(*copy_tree(tuple(args)))
    assert_close(got, sourcead.grad(f, wrt=wrt, jit=False)(*copy_tree(tuple(args))), rtol=1e-10, atol=1e-12)
    got = sourcead.jvp(f, wrt=wrt, jit=True)(*copy_tree(tuple(args)), tangents=tangents)
    assert_close(got, sourcead.jvp(f, wrt=wrt, jit=False)(*copy_tree(tuple(args)), tangents=tangents), 1e-10, 1e-12)
