"""Second order and Jacobians (issue 14), driven by the zoo: hvp against central differences of
the gradient, the symmetry <u, H v> == <v, H u>, hessian against hvp and against jax.hessian,
jacobian against central differences in both modes, batches against one call per direction.

Compiled objects are built once per (case, transform, jit) and shared; every case runs as plain
Python (jit=False, no compile), a subset compiled (numba is an optimisation, never the semantics).
"""

from __future__ import annotations

import functools
import inspect
import re
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from numeric import argument_index, assert_close, central_difference_jvp, copy_tree, norm, random_like, vdot
from zoo import NO_HVP, NO_HVP_PRIMITIVE, ZOO

import sourcead
from sourcead.rules import PRIMITIVES, Bilinear, Partials, Pullback, Selection, primitive

CASES = {case.name: case for case in ZOO}


def _args(name: str) -> tuple:
    rng = np.random.default_rng([zlib.crc32(name.encode()), 1])
    return CASES[name].make_args(rng)


HVP_CASES = [c for c in ZOO if c.scalar_output and c.name not in NO_HVP]
COMPILED = ["poly2", "logistic_map", "heat_euler", "newton_sqrt", "first_passage", "softplus_mean", "selections"]
ARRAY_CASES = [c for c in ZOO if not c.scalar_output and not isinstance(c.func(*_args(c.name)), tuple)]

FD_RTOL = 1e-6  # central differences of an exact gradient
EXACT = 1e-10  # two exact computations of the same derivative, up to rounding


@functools.cache
def prepared(name: str, kind: str, jit: bool, mode: str = "auto"):
    case = CASES[name]
    if kind == "jacobian":
        return sourcead.jacobian(case.func, wrt=case.wrt, mode=mode, jit=jit)
    return getattr(sourcead, kind)(case.func, wrt=case.wrt, jit=jit)


def _directions(name: str, args: tuple, k: int = 0) -> tuple:
    """Seeded random tangents for each wrt argument (k = 0: one, else a batch of k)."""
    case = CASES[name]
    rng = np.random.default_rng([zlib.crc32(name.encode()), 2, k])
    one = lambda: tuple(random_like(rng, args[argument_index(case.func, w)]) for w in case.wrt)  # noqa: E731
    if not k:
        return one()
    rows = [one() for _ in range(k)]
    return tuple(np.array([r[i] for r in rows]) for i in range(len(case.wrt)))


def _gradient_function(name: str):
    """The gradient (plain Python, independent of the hvp code) as a function with f's signature,
    for central differences; a single wrt gives a 1-tuple so every result is a tuple."""
    case = CASES[name]
    g = prepared(name, "grad", False)

    def gradient(*args):
        return g(*copy_tree(args))

    gradient.__signature__ = inspect.signature(case.func)  # type: ignore[attr-defined]
    return gradient


def _hvp(name: str, jit: bool, args: tuple, tangents: tuple):
    """H v, a tuple with one entry per wrt argument (the zoo's wrt is a tuple)."""
    return prepared(name, "hvp", jit)(*copy_tree(args), tangents=copy_tree(tangents))


each_hvp_case = pytest.mark.parametrize("case", HVP_CASES, ids=lambda c: c.name)
each_jit = pytest.mark.parametrize(
    "name, jit", [(c.name, False) for c in HVP_CASES] + [(n, True) for n in COMPILED], ids=lambda v: str(v)
)


@each_jit
def test_hvp_matches_finite_differences_of_the_gradient(name, jit):
    case, args = CASES[name], _args(name)
    v = _directions(name, args)
    hv = _hvp(name, jit, args, v)
    expected = central_difference_jvp(_gradient_function(name), args, case.wrt, v, eps=1e-5)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert_close(hv, expected, rtol=FD_RTOL * 10, atol=FD_RTOL * 10 * norm(expected))


@each_hvp_case
def test_hvp_is_symmetric(case):
    args = _args(case.name)
    u = _directions(case.name, args)
    v = tuple(random_like(np.random.default_rng(5), t) for t in u)
    hu, hv = _hvp(case.name, False, args, u), _hvp(case.name, False, args, v)
    assert abs(vdot(u, hv) - vdot(v, hu)) <= EXACT * (1.0 + norm(u) * norm(hv) + norm(v) * norm(hu))


@pytest.mark.parametrize("name", COMPILED)
def test_compiled_hvp_equals_plain_python(name):
    args = _args(name)
    v = _directions(name, args)
    expected = _hvp(name, False, args, v)
    assert_close(_hvp(name, True, args, v), expected, rtol=EXACT, atol=EXACT * norm(expected))


@pytest.mark.parametrize("jit", [False, True], ids=["nojit", "jit"])
@pytest.mark.parametrize("name", ["heat_euler", "softplus_mean", "tuple_helpers"])
def test_a_batch_of_directions_is_one_call_per_direction(name, jit):
    args = _args(name)
    batch = _directions(name, args, k=3)
    rows = prepared(name, "hvp", jit)(*copy_tree(args), tangents=batch)
    for j in range(3):
        expected = _hvp(name, jit, args, tuple(b[j] for b in batch))
        assert_close(tuple(r[j] for r in rows), expected, rtol=EXACT, atol=EXACT * norm(expected))
    _, dots = prepared(name, "jvp", jit)(*copy_tree(args), tangents=batch)
    for j in range(3):
        _, expected = prepared(name, "jvp", jit)(*copy_tree(args), tangents=tuple(b[j] for b in batch))
        assert_close(dots[j], expected, rtol=EXACT, atol=EXACT * norm(expected))
    seeds = np.array([1.0, -2.0, 0.5])
    _, grads = prepared(name, "vjp", jit)(*copy_tree(args), cotangent=seeds)
    g = prepared(name, "grad", jit)(*copy_tree(args))
    for j in range(3):
        assert_close(tuple(x[j] for x in grads), _scaled(g, seeds[j]), rtol=EXACT, atol=EXACT * norm(g))


def _scaled(tree, c):
    return tuple(_scaled(t, c) for t in tree) if isinstance(tree, tuple) else tree * c


@pytest.mark.parametrize("name", ["heat_euler", "softplus_mean", "least_squares_vec", "branches", "math_mix"])
def test_hessian_columns_are_hvps_and_symmetric(name):
    case, args = CASES[name], _args(name)
    H = sourcead.hessian(case.func, wrt=case.wrt, jit=False)(*copy_tree(args))  # nested tuples
    v = _directions(name, args)
    hv = _hvp(name, False, args, v)
    shapes = [np.shape(args[argument_index(case.func, w)]) for w in case.wrt]
    for a, sa in enumerate(shapes):
        got = sum(np.tensordot(H[a][b], v[b], axes=len(sb)) for b, sb in enumerate(shapes))
        assert_close(np.asarray(got) if sa else float(got), hv[a], rtol=EXACT, atol=EXACT * norm(hv))
        for b in range(len(shapes)):
            na, nb = int(np.prod(sa)), int(np.prod(shapes[b]))
            np.testing.assert_allclose(
                np.reshape(H[a][b], (na, nb)), np.reshape(H[b][a], (nb, na)).T, rtol=EXACT, atol=EXACT
            )


def test_compiled_hessian_of_a_parallel_loop_equals_plain_python():
    import parallel_kernels as par

    rng = np.random.default_rng(3)
    w, X, y = rng.standard_normal(4), rng.standard_normal((50, 4)), (rng.random(50) > 0.5).astype(np.float64)
    compiled = sourcead.hessian(par.logistic_loss, jit=True)(w, X, y)
    plain = sourcead.hessian(par.logistic_loss, jit=False)(w, X, y)
    np.testing.assert_allclose(compiled, plain, rtol=1e-12, atol=1e-14)
    p = 1.0 / (1.0 + np.exp(-X @ w))  # the logistic loss's Hessian in closed form: X^T diag(p(1-p)) X / n
    np.testing.assert_allclose(compiled, X.T @ (X * (p * (1 - p))[:, None]) / 50, rtol=1e-10)


# --- jacobians ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["forward", "reverse", "auto"])
@pytest.mark.parametrize("case", ARRAY_CASES + [CASES["heat_euler"]], ids=lambda c: c.name)
def test_jacobian_matches_finite_differences(case, mode):
    args = _args(case.name)
    J = prepared(case.name, "jacobian", False, mode)(*copy_tree(args))  # a tuple wrt: a tuple of Jacobians
    rng = np.random.default_rng(11)
    v = tuple(random_like(rng, args[argument_index(case.func, w)]) for w in case.wrt)
    expected = central_difference_jvp(case.func, args, case.wrt, v)
    expected = expected[0] if isinstance(expected, tuple) else expected  # written arguments: the result
    shapes = [np.shape(args[argument_index(case.func, w)]) for w in case.wrt]
    got = sum(np.tensordot(J[a], v[a], axes=len(s)) if s else J[a] * v[a] for a, s in enumerate(shapes))
    assert_close(np.asarray(got) if np.ndim(expected) else float(got), expected, rtol=FD_RTOL, atol=FD_RTOL)


@pytest.mark.parametrize("name", ["gram", "elementwise_map"])
def test_compiled_jacobians_agree_in_both_modes(name):
    case, args = CASES[name], _args(name)
    forward = prepared(name, "jacobian", True, "forward")(*copy_tree(args))
    reverse = prepared(name, "jacobian", True, "reverse")(*copy_tree(args))
    out_shape = np.shape(case.func(*copy_tree(args)))
    for w, f, r in zip(case.wrt, forward, reverse, strict=True):
        np.testing.assert_allclose(f, r, rtol=EXACT, atol=EXACT)
        assert f.shape == out_shape + np.shape(args[argument_index(case.func, w)])


# --- JAX, where installed ---------------------------------------------------------------------


def _jax():
    try:
        import jax
    except ImportError:
        pytest.skip("jax is not installed (pip install 'sourcead[jax]')")
    jax.config.update("jax_enable_x64", True)
    return jax


def regularized_logistic(w, X, y, lam):
    n, d = X.shape
    total = 0.0
    for i in range(n):
        z = 0.0
        for j in range(d):
            z += X[i, j] * w[j]
        total += np.log1p(np.exp(-y[i] * z))
    reg = 0.0
    for j in range(d):
        reg += w[j] * w[j]
    return total / n + 0.5 * lam * reg


def softmax_energy(x, A):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m))) + 0.5 * np.sum((A @ x) ** 2) + np.sum(np.sin(x) * x)


def test_hessian_matches_jax_hessian():
    jax = _jax()
    jnp = jax.numpy
    rng = np.random.default_rng(4)
    w, X, y = rng.standard_normal(5), rng.standard_normal((30, 5)), np.sign(rng.standard_normal(30))
    ours = sourcead.hessian(regularized_logistic, jit=False)(w, X, y, 0.1)
    theirs = jax.hessian(lambda w: jnp.mean(jnp.log1p(jnp.exp(-y * (X @ w)))) + 0.05 * jnp.sum(w * w))(w)
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-11, atol=1e-13)
    x, A = rng.standard_normal(6), rng.standard_normal((4, 6))
    ours = sourcead.hessian(softmax_energy, wrt="x")(x, A)
    theirs = jax.hessian(lambda x: jax.nn.logsumexp(x) + 0.5 * jnp.sum((A @ x) ** 2) + jnp.sum(jnp.sin(x) * x))(x)
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-11, atol=1e-12)


# --- what second order accepts, and refuses with a position -----------------------------------


def _called_names(template: str) -> set[str]:
    return {n.replace("{m}", "np") for n in re.findall(r"([A-Za-z_{}][\w.{}]*)\(", template)}


def _tangent_templates():
    for prim in PRIMITIVES.values():
        form = prim.derivative
        if isinstance(form, Partials):
            yield prim.name, form.templates + (form.arrays or ())
        elif isinstance(form, Selection):
            yield prim.name, form.masks
        elif isinstance(form, Pullback):
            yield prim.name, (form.tangent,)
        elif isinstance(form, Bilinear):
            yield prim.name, form.tangents


def _gap(name: str):
    """What second order lacks for the primitive `name`, as its declaration says (or None)."""
    prim = primitive(name)
    return prim.second_order if prim is not None else None


def test_every_call_a_tangent_writes_is_differentiable_or_refused():
    """Second order differentiates the tangent code: each function a tangent template calls (and
    `broadcast_tangent`, which linearize adds) has a derivative or is constant, or its primitive is
    listed as refused (and then the refusal is positioned: see the test below)."""
    found = {(owner, name) for owner, templates in _tangent_templates() for t in templates for name in _called_names(t)}
    found.add(("linearize", "broadcast_tangent"))
    for owner, name in sorted(found):
        target = primitive(name) or primitive(name.replace("np.", "math."))
        assert target is not None, f"{name} (in the tangent of {owner}) is not a primitive"
        if target.derivative is None and not target.constant:
            assert _gap(owner) is not None, f"{name} (tangent of {owner}) has no derivative"


@pytest.mark.parametrize("name", NO_HVP_PRIMITIVE)
def test_what_second_order_does_not_cover_is_refused_at_its_line(name):
    case = CASES[name]
    with pytest.raises(sourcead.SourceADError) as info:
        sourcead.hvp(case.func, wrt=case.wrt, jit=False)(*_args(name), tangents=_directions(name, _args(name)))
    where = info.value.where
    primitive_name = re.search(r"`([\w.]+)`", info.value.message).group(1)
    assert _gap(primitive_name) is not None and info.value.hint
    assert where is not None and where.filename == case.func.__code__.co_filename
    assert primitive_name.split(".")[-1] in where.source_line or "(" in where.source_line


def test_jacobian_of_a_tuple_result_is_refused():
    with pytest.raises(sourcead.SourceADError, match="returns a tuple"):
        sourcead.jacobian(CASES["mean_and_centered"].func, jit=False)(_args("mean_and_centered")[0])


def test_hvp_of_an_array_result_is_refused():
    with pytest.raises(sourcead.SourceADError, match="hvp needs a function that returns a float") as info:
        sourcead.hvp(CASES["gram"].func, jit=False)
    assert info.value.where is not None and info.value.where.filename.endswith("zoo.py")


def test_decorator_source_and_pickle():
    import pickle

    f = sourcead.differentiable(CASES["sum_squares"].func)
    text = f.source(mode="hvp", wrt="x")
    assert "def sum_squares_hvp(x, x_dot, out_bar):" in text
    x, v = np.arange(4.0), np.ones(4)
    np.testing.assert_array_equal(f.hvp(jit=False)(x, tangents=v), 2.0 * v)
    again = pickle.loads(pickle.dumps(sourcead.hessian(CASES["sum_squares"].func, jit=False)))
    np.testing.assert_array_equal(again(x), 2.0 * np.eye(4))


# --- check_derivative(order=2) and the command line -------------------------------------------


@pytest.mark.parametrize("name", ["heat_euler", "softplus_mean", "while_in_for"])
def test_check_derivative_covers_second_order(name):
    case = CASES[name]
    report = sourcead.check_derivative(case.func, *_args(name), wrt=case.wrt, jit=False, order=2)
    assert report.ok, str(report)
    hvp_lines = [c for c in report.checks if c.what.startswith("hvp vs finite differences")]
    assert len(hvp_lines) == len(case.wrt) and any(c.what.startswith("symmetry") for c in report.checks)


def test_check_derivative_order_2_needs_a_float_result():
    with pytest.raises(sourcead.SourceADError, match="order=2"):
        sourcead.check_derivative(CASES["gram"].func, _args("gram")[0], jit=False, order=2)


ROOT = Path(__file__).resolve().parent.parent
_BOOT = (
    "import importlib.util, sys; sys.path.insert(0, {root!r}); "
    "s = importlib.util.spec_from_file_location('_sourcead_cli', {root!r} + '/cli/__init__.py', "
    "submodule_search_locations=[{root!r} + '/cli']); m = importlib.util.module_from_spec(s); "
    "sys.modules['_sourcead_cli'] = m; s.loader.exec_module(m); "
    "from _sourcead_cli.main import main; main()"
)


def _cli(*argv: str):
    """The command line of this checkout (the installed `_sourcead_cli` may be another's)."""
    import subprocess

    boot = _BOOT.format(root=str(ROOT))
    return subprocess.run([sys.executable, "-c", boot, *argv], capture_output=True, text=True, cwd=ROOT, timeout=600)


def test_cli_emit_hvp_and_check_order_2():
    emitted = _cli("emit", "examples/recurrence.py:recurrence", "--mode", "hvp", "--wrt", "r")
    assert emitted.returncode == 0, emitted.stderr
    assert "def recurrence_hvp(r, x0, n, r_dot, out_bar):" in emitted.stdout
    checked = _cli("check", "examples/recurrence.py:recurrence", "--order", "2", "--no-jit")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "hvp vs finite differences, wrt r" in checked.stdout and "all 13 checks pass" in checked.stdout
    bad = _cli("check", "examples/recurrence.py:recurrence", "--order", "3")
    assert bad.returncode == 2


def test_newton_logistic_example_runs_and_agrees_with_lbfgs():
    import os
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore"}
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "newton_logistic.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    losses = {m: float(v) for m, v in re.findall(r"^\s*([\w-]+): .*? loss ([0-9.]+)", out.stdout, re.M)}
    assert set(losses) == {"Newton-CG", "trust-krylov", "L-BFGS-B"}, out.stdout
    assert max(losses.values()) - min(losses.values()) < 1e-10, out.stdout


def test_readme_second_order_block_runs(tmp_path):
    """The README's second-order example, run as a script (sourcead reads its source from a file)."""
    import os
    import subprocess

    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Second order and Jacobians") :]
    block = re.search(r"```python\n(.*?)```", section, flags=re.S).group(1)
    script = tmp_path / "readme_second_order.py"
    check = "g = ad.grad(energy)\n"
    check += "fd = np.stack([(g(x + 1e-6 * e, 2.0) - g(x - 1e-6 * e, 2.0)) / 2e-6 for e in np.eye(6)])\n"
    check += "print(float(np.abs(fd - H).max()), float(np.abs(hv - H @ v).max()))\n"
    script.write_text(block + check)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore"}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    fd_gap, hv_gap = map(float, out.stdout.split())
    assert fd_gap < 1e-6 and hv_gap < 1e-12


@pytest.mark.parametrize("make", [sourcead.hvp, sourcead.hessian, sourcead.jacobian], ids=lambda m: m.__name__)
def test_second_order_objects_pickle_as_their_recipe(make):
    import pickle

    case = CASES["heat_euler"]
    prepared = make(case.func, wrt=case.wrt, jit=False)
    again = pickle.loads(pickle.dumps(prepared))
    assert type(again) is type(prepared)
    args = _args("heat_euler")
    kwargs = {"tangents": _directions("heat_euler", args)} if make is sourcead.hvp else {}
    assert_close(again(*copy_tree(args), **kwargs), prepared(*copy_tree(args), **kwargs), rtol=0.0)


# --- vector mode: one sweep carrying k tangents ------------------------------------------------

# (prange code keeps one sweep per direction: in-place lane updates would race)
SINGLE_RESULT = [
    c for c in ZOO if not isinstance(c.func(*_args(c.name)), tuple) and "prange" not in inspect.getsource(c.func)
]


def _vector_matches_per_direction(name: str, jit: bool) -> None:
    from sourcead.api import vector_cache as api

    case, args = CASES[name], _args(name)
    batch = _directions(name, args, k=3)
    jf = sourcead.jvp(case.func, wrt=case.wrt, jit=jit)  # a fresh object: its own vector twin
    value, lanes = jf(*copy_tree(args), tangents=batch)
    assert api._VECTOR[(case.func, case.wrt, jit)] is not None, "vector mode should apply here"
    for j in range(3):
        one_value, one = jf(*copy_tree(args), tangents=tuple(b[j] for b in batch))
        one = one[0] if isinstance(one, tuple) else one  # written arguments: the result's tangent
        assert_close(lanes[j], one, rtol=EXACT, atol=EXACT * norm(one))
    assert_close(value, one_value, rtol=0.0)


@pytest.mark.parametrize("case", SINGLE_RESULT, ids=lambda c: c.name)
def test_vector_mode_equals_one_sweep_per_direction(case):
    _vector_matches_per_direction(case.name, jit=False)


@pytest.mark.parametrize("name", ["heat_euler", "softplus_mean", "recurrent_rows", "branches", "selections"])
def test_compiled_vector_mode_equals_one_sweep_per_direction(name):
    _vector_matches_per_direction(name, jit=True)


def test_prange_code_falls_back_to_one_sweep_per_direction():
    import parallel_kernels as par

    from sourcead.api import vector_cache as api

    rng = np.random.default_rng(8)
    w, X, y = rng.standard_normal(3), rng.standard_normal((20, 3)), (rng.random(20) > 0.5).astype(np.float64)
    jf = sourcead.jvp(par.logistic_loss, jit=False)
    batch = rng.standard_normal((4, 3))
    _, dots = jf(w, X, y, tangents=batch)
    assert api._VECTOR[(par.logistic_loss, 0, False)] is None
    for j in range(4):
        assert dots[j] == pytest.approx(jf(w, X, y, tangents=batch[j])[1], rel=1e-13)


# --- the helpers forward mode writes, differentiated ------------------------------------------

from sourcead.runtime import broadcast_tangent, select_along  # noqa: E402


def uses_broadcast_tangent(t, A, s):
    return np.sum(broadcast_tangent(t * t + s, A) * A) + np.sum(broadcast_tangent(np.sin(t), A[0]) * t)


def uses_select_along(T, X):
    return np.sum(select_along(T * T, X, 0, True) ** 2) + np.sum(select_along(np.sin(T), X, 1, False) * X[0, :])


def extremes_along_axes(X, w):
    return np.sum(np.max(X * X * w, axis=0) ** 2) + np.sum(np.min(np.sin(X), axis=1) * X[0, 0])


def widened(x, A):
    return np.sum(np.sin(x * x + A)) + np.sum(np.cos(x * A[0, :] + x))


@pytest.mark.parametrize("jit", [False, True], ids=["nojit", "jit"])
def test_broadcast_tangent_rule_against_finite_differences(jit):
    rng = np.random.default_rng(12)
    t, A = rng.uniform(0.1, 1.0, 3), rng.uniform(0.1, 1.0, (4, 3))
    report = sourcead.check_derivative(uses_broadcast_tangent, t, A, 0.4, wrt=(0, 2), jit=jit)
    assert report.ok, str(report)
    report = sourcead.check_derivative(uses_broadcast_tangent, 0.3, A, 0.4, wrt=(0, 2), jit=jit)
    assert report.ok, str(report)


def test_hvp_through_a_widened_tangent():
    """x * x + A (x a float, A an array): the tangent is broadcast_tangent(2 x x_dot, A), which the
    second pass differentiates (its adjoint sums back over A's shape)."""
    rng = np.random.default_rng(13)
    A = rng.uniform(-1.0, 1.0, (3, 4))
    assert "unbroadcast(" in sourcead.differentiable(widened).source(mode="hvp", wrt="x")
    report = sourcead.check_derivative(widened, 0.7, A, wrt="x", jit=False, order=2)
    assert report.ok, str(report)


@pytest.mark.parametrize("jit", [False, True], ids=["nojit", "jit"])
@pytest.mark.parametrize("name, wrt", [("heat_in_place", ("u", "kappa")), ("fill_squares", ("x",))])
def test_hvp_of_a_function_that_writes_its_arguments(name, wrt, jit):
    import mutating

    func = getattr(mutating, name)
    rng = np.random.default_rng(14)
    args = (rng.standard_normal(8), 0.2, 6) if name == "heat_in_place" else (rng.standard_normal(5), np.zeros(5))
    v = tuple(random_like(rng, args[argument_index(func, w)]) for w in wrt)
    before = copy_tree(args)
    hv = sourcead.hvp(func, wrt=wrt, jit=jit)(*args, tangents=v)
    assert_close(args, before, rtol=0.0)  # derivatives never write the caller's arrays
    g = sourcead.grad(func, wrt=wrt, jit=False)

    def gradient(*a):
        return g(*copy_tree(a))

    gradient.__signature__ = inspect.signature(func)  # type: ignore[attr-defined]
    expected = central_difference_jvp(gradient, args, wrt, v, eps=1e-5)
    assert_close(hv, expected, rtol=1e-5, atol=1e-5 * norm(expected))


def test_select_along_rule_against_finite_differences():
    rng = np.random.default_rng(15)
    T, X = rng.uniform(0.1, 1.0, (3, 3)), rng.permutation(9).reshape(3, 3) / 9.0  # distinct: no ties
    report = sourcead.check_derivative(uses_select_along, T, X, wrt=0, jit=False)
    assert report.ok, str(report)


def test_hvp_of_extremes_along_an_axis():
    rng = np.random.default_rng(16)
    X, w = rng.permutation(12).reshape(4, 3) / 12.0 + 0.05, rng.uniform(0.5, 1.5, 3)
    report = sourcead.check_derivative(extremes_along_axes, X, w, wrt=(0, 1), jit=False, order=2)
    assert report.ok, str(report)
    text = sourcead.differentiable(extremes_along_axes).source(mode="hvp", wrt=(0, 1), arrays={"X": 2, "w": 1})
    assert "select_along_bar(" in text


def test_parameters_left_to_their_defaults():
    import idioms

    rng = np.random.default_rng(17)
    x = rng.uniform(0.2, 0.8, 4)
    H = sourcead.hessian(idioms.defaults_and_constants, jit=False)(x)
    np.testing.assert_allclose(H, sourcead.hessian(idioms.defaults_and_constants, jit=False)(x, 0.5, 2), rtol=0.0)
    v = rng.standard_normal(4)
    np.testing.assert_allclose(H @ v, sourcead.hvp(idioms.defaults_and_constants, jit=False)(x, tangents=v), rtol=1e-12)
    J = sourcead.jacobian(idioms.defaults_and_constants, mode="forward", jit=False)(x)
    np.testing.assert_allclose(J, sourcead.grad(idioms.defaults_and_constants, jit=False)(x), rtol=1e-12)


def test_a_second_order_gap_says_its_declared_reason_and_what_to_write_instead():
    """`np.sort` declares why second order lacks it and what to write instead: hvp says both."""
    name = "reductions_and_statistics"  # ends with np.sort(x) of the argument x
    case, args = CASES[name], _args(name)
    with pytest.raises(sourcead.SourceADError) as info:
        sourcead.hvp(case.func, wrt=case.wrt, jit=False)(*args, tangents=_directions(name, args))
    gap = _gap("np.sort")
    assert gap is not None
    assert (
        info.value.message
        == gap.says("np.sort")
        == (
            "second order does not cover `np.sort` of a value that carries a derivative yet (its tangent "
            "gathers by `np.argsort`, an indexing by an array that the subset does not have)"
        )
    )
    assert info.value.hint == "Sort values that carry no derivative, or index by an order computed from them."


def test_a_second_run_refusal_names_the_users_variable_not_its_tangent():
    # hvp reanalyses the generated forward code, whose variables include the tangents it made
    # (`a_dot`); a refusal met there says "the tangent of `a`", in the user's names
    from sourcead.forward.second import in_user_words
    from sourcead.ir.naming import Namer

    namer = Namer(["a", "a_dot_1", "t"])
    namer.dot("a")
    namer.bar("t")
    said = in_user_words("the array passed as `a_dot` is swapped; `t_bar` and `t` stay", namer)
    assert said == "the array passed as the tangent of `a` is swapped; `t_bar` and `t` stay"


def _reads_past_its_argument(x):
    s = 0.0
    for i in range(4):
        s += x[i] ** 3
    return s


@pytest.mark.parametrize("jit", [False, True], ids=["nojit", "jit"])
@pytest.mark.parametrize("batched", [False, True], ids=["one", "batch"])
def test_an_hvp_whose_function_fails_says_where_not_a_raw_error(jit, batched):
    """The generated code's raw IndexError was re-raised as it was by hvp (one direction and a batch):
    like grad, it is the user's index, at the user's line."""
    tangents = np.ones((2, 3)) if batched else np.ones(3)
    with pytest.raises(sourcead.SourceADError) as info:
        sourcead.hvp(_reads_past_its_argument, jit=jit)(np.ones(3), tangents=tangents)
    err = info.value
    assert "out of range" in str(err), str(err)
    assert err.where is not None and err.where.source_line.strip() == "s += x[i] ** 3"
