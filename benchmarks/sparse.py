"""Sparse Jacobians and Hessians (issue 41): ``python -m benchmarks.sparse``.

* a banded residual (loops, 3 nonzeros a row) at n = 10^3 .. 2 x 10^5: the sparse Jacobian
  (``jacobian(sparse=True)``, steady state: the cached pattern and colouring, one vector-mode sweep
  of 3 tangents, decompression into CSR) against the numba primal (goal at 2 x 10^5: <= 10x), the
  dense ``jacobian``, JAX ``jacfwd`` (dense) and a hand-written colour-seeded ``jvp`` in JAX (the
  same seeds, vmapped and jitted, decompressed the same way);
* the chained Rosenbrock function (a loop) at n = 10^3 .. 10^5: the sparse Hessian (3 hvps of a
  star colouring) in units of a gradient (goal at 10^5: <= 12), against the dense ``hessian``,
  JAX ``hessian`` and a colour-seeded JAX hvp;
* colours against the optimum on banded, 2-D 5-point and 9-point stencils, an arrowhead and a
  block-diagonal pattern, all read from code by the pattern sweep;
* the first call: the pattern sweep plus the colouring, against one gradient's compile (a cold
  process, empty caches; goal: <= 2x).

Medians of timed batches after a warm-up call, in one process (the compile: in a child process).
"""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numba
import numpy as np

import sourcead
from sourcead.colouring import bicolouring, column_colouring, decompress_columns, decompress_star, star_colouring

ROOT = Path(__file__).resolve().parents[1]


def banded(x):
    n = x.shape[0]
    r = np.zeros(n)
    r[0] = x[0] - 1.0
    for i in range(1, n - 1):
        r[i] = x[i - 1] - 2.0 * x[i] + x[i + 1] + 0.1 * math.exp(x[i])
    r[n - 1] = x[n - 1] * x[n - 2]
    return r


def rosenbrock(x):
    s = 0.0
    for i in range(x.shape[0] - 1):
        s += 100.0 * (x[i + 1] - x[i] * x[i]) ** 2 + (1.0 - x[i]) ** 2
    return s


def stencil(u, points):
    n = u.shape[0]
    m = u.shape[1]
    r = u.copy()
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            s = 4.0 * u[i, j] - u[i - 1, j] - u[i + 1, j] - u[i, j - 1] - u[i, j + 1]
            if points == 9:
                s += u[i - 1, j - 1] + u[i + 1, j + 1] - u[i - 1, j + 1] - u[i + 1, j - 1]
            r[i, j] = s + u[i, j] ** 3
    return r


def arrowhead(x):
    n = x.shape[0]
    r = np.zeros(n)
    r[0] = np.sum(x * x)
    for i in range(1, n):
        r[i] = x[0] * x[i] + x[i]
    return r


def blocks(x):
    nb = x.shape[0] // 4
    r = np.zeros(4 * nb)
    for b in range(nb):
        for k in range(4):
            for q in range(4):
                r[4 * b + k] += x[4 * b + k] * x[4 * b + q]
    return r


def median_seconds(fn, *args, repeats=5, batch_seconds=0.05) -> float:
    fn(*args)
    start = time.perf_counter()
    fn(*args)
    once = max(time.perf_counter() - start, 1e-7)
    number = max(1, int(batch_seconds / once))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn(*args)
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times)


def _fmt(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds * 1e3:.3g} ms" if seconds < 1 else f"{seconds:.3g} s"


def _jax():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)

    def banded_jax(x):
        mid = x[:-2] - 2.0 * x[1:-1] + x[2:] + 0.1 * jnp.exp(x[1:-1])
        return jnp.concatenate([x[:1] - 1.0, mid, (x[-1] * x[-2])[None]])

    def rosen_jax(x):
        return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

    return jax, jnp, banded_jax, rosen_jax


def _pushforward(jax, f):
    """v, s -> the derivative of f at v in direction s (a JVP; of a gradient: an hvp)."""
    return lambda s, v: jax.jvp(f, (v,), (s,))[1]


def jacobian_rows(sizes=(1000, 10000, 200000)) -> tuple[list[str], dict]:
    jx = _jax()
    primal = numba.njit(banded)
    sparse = sourcead.jacobian(banded, sparse=True)
    dense = sourcead.jacobian(banded, mode="forward")
    lines = [
        "| n | numba primal | sparse J | sparse / primal | colours | dense J | JAX jacfwd | JAX colour-seeded jvp |",
        "|---|---|---|---|---|---|---|---|",
    ]
    goal = {}
    for n in sizes:
        x = np.linspace(-0.5, 0.5, n)
        t_primal = median_seconds(primal, x)
        start = time.perf_counter()
        sparse(x)
        first = time.perf_counter() - start
        t_sparse = median_seconds(sparse, x)
        pattern, plan = sparse.plan(x)
        t_dense = median_seconds(dense, x, repeats=3) if n <= 1000 else None
        t_jfwd = t_jseed = None
        if jx is not None:
            jax, jnp, banded_jax, _ = jx
            xj = jnp.asarray(x)
            if n <= 1000:
                jf = jax.jit(jax.jacfwd(banded_jax))
                t_jfwd = median_seconds(lambda v, jf=jf: jf(v).block_until_ready(), xj, repeats=3)
            seeds = jnp.asarray(np.eye(plan.count)[plan.colours])  # (n, k)
            push = jax.jit(jax.vmap(_pushforward(jax, banded_jax), in_axes=(1, None), out_axes=1))
            P = pattern.matrix

            def seeded(v, push=push, seeds=seeds, P=P, colours=plan.colours):
                return decompress_columns(P, colours, np.asarray(push(seeds, v)))

            t_jseed = median_seconds(seeded, xj, repeats=3)
        ratio = t_sparse / t_primal
        if n == sizes[-1]:
            goal = {"n": n, "ratio": ratio, "first": first}
        lines.append(
            f"| {n} | {_fmt(t_primal)} | {_fmt(t_sparse)} | {ratio:.1f} | {plan.count} ({plan.side}) | "
            f"{_fmt(t_dense)} | {_fmt(t_jfwd)} | {_fmt(t_jseed)} |"
        )
    return lines, goal


def hessian_rows(sizes=(1000, 10000, 100000)) -> tuple[list[str], dict]:
    jx = _jax()
    grad = sourcead.grad(rosenbrock)
    sparse = sourcead.hessian(rosenbrock, sparse=True)
    dense = sourcead.hessian(rosenbrock)
    lines = [
        "| n | gradient | sparse H | sparse H / gradient | colours | dense H | JAX hessian | JAX colour-seeded hvp |",
        "|---|---|---|---|---|---|---|---|",
    ]
    goal = {}
    for n in sizes:
        x = np.linspace(-0.5, 0.5, n)
        t_grad = median_seconds(grad, x)
        start = time.perf_counter()
        sparse(x)
        first = time.perf_counter() - start
        t_sparse = median_seconds(sparse, x)
        pattern, plan = sparse.plan(x)
        t_dense = median_seconds(dense, x, repeats=3) if n <= 1000 else None
        t_jh = t_jseed = None
        if jx is not None:
            jax, jnp, _, rosen_jax = jx
            xj = jnp.asarray(x)
            if n <= 1000:
                jh = jax.jit(jax.hessian(rosen_jax))
                t_jh = median_seconds(lambda v, jh=jh: jh(v).block_until_ready(), xj, repeats=3)
            seeds = jnp.asarray(np.eye(plan.count)[plan.colours])
            hvps = jax.jit(jax.vmap(_pushforward(jax, jax.grad(rosen_jax)), in_axes=(1, None), out_axes=1))
            P = pattern.matrix

            def seeded(v, hvps=hvps, seeds=seeds, P=P, colours=plan.colours):
                return decompress_star(P, colours, np.asarray(hvps(seeds, v)))

            t_jseed = median_seconds(seeded, xj, repeats=3)
        ratio = t_sparse / t_grad
        if n == sizes[-1]:
            goal = {"n": n, "ratio": ratio, "first": first}
        lines.append(
            f"| {n} | {_fmt(t_grad)} | {_fmt(t_sparse)} | {ratio:.1f} | {plan.count} | {_fmt(t_dense)} | "
            f"{_fmt(t_jh)} | {_fmt(t_jseed)} |"
        )
    return lines, goal


def colour_rows() -> list[str]:
    """Colours of patterns read from code, beside the optimum known for each."""
    cases = [
        ("banded (n = 10^4)", banded, (np.linspace(0, 1, 10000),), "jacobian", 3),
        ("2-D 5-point (64 x 64)", stencil, (np.ones((64, 64)), 5), "jacobian", 5),
        ("2-D 9-point (64 x 64)", stencil, (np.ones((64, 64)), 9), "jacobian", 9),
        ("block diagonal 4 x 4 (n = 4000)", blocks, (np.ones(4000),), "jacobian", 4),
        ("arrowhead (n = 1000)", arrowhead, (np.linspace(0, 1, 1000),), "jacobian", 3),
        ("Rosenbrock Hessian (n = 10^4)", rosenbrock, (np.linspace(0, 1, 10000),), "hessian", 3),
    ]
    lines = [
        "| pattern | nonzeros | forward | reverse | bicolouring | star | optimum |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, f, args, of, optimum in cases:
        P = sourcead.sparsity(f, of=of)(*args)
        if of == "hessian":
            star = int(star_colouring(P).max()) + 1
            lines.append(f"| {name} | {P.nnz} | - | - | - | {star} | {optimum} |")
            continue
        fwd = int(column_colouring(P).max()) + 1
        rev = int(column_colouring(P.T.tocsr()).max()) + 1
        rc, cc = bicolouring(P)
        both = int(rc.max()) + int(cc.max())
        lines.append(f"| {name} | {P.nnz} | {fwd} | {rev} | {both} | - | {optimum} |")
    return lines


_COMPILE = """
import sys, time, numpy as np
sys.path.insert(0, {root!r})
from benchmarks.sparse import banded
import sourcead
def loss(x):
    return np.sum(banded(x) ** 2)
x = np.linspace(-0.5, 0.5, 1000)
start = time.perf_counter()
sourcead.grad(loss)(x)
print(time.perf_counter() - start)
"""


def gradient_compile_seconds() -> float | None:
    """One gradient's transform and compile, in a fresh process with empty caches."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "SOURCEAD_CACHE_DIR": tmp, "NUMBA_CACHE_DIR": tmp}
        child = Path(tmp) / "gradient_compile.py"  # sourcead reads the function's source from its file
        child.write_text(_COMPILE.format(root=str(ROOT)))
        done = subprocess.run([sys.executable, str(child)], capture_output=True, text=True, env=env)
        try:
            return float(done.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return None


def first_call_rows() -> tuple[list[str], dict]:
    """The pattern sweep and the colouring on a first call, against one gradient's compile."""
    lines = [
        "| first call | pattern sweep | colouring | total | gradient compile | ratio |",
        "|---|---|---|---|---|---|",
    ]
    compile_s = gradient_compile_seconds()
    found = {}
    for name, f, x, of in (
        ("banded Jacobian, n = 2 x 10^5", banded, np.linspace(-0.5, 0.5, 200000), "jacobian"),
        ("Rosenbrock Hessian, n = 10^5", rosenbrock, np.linspace(-0.5, 0.5, 100000), "hessian"),
    ):
        prepared = sourcead.sparsity(f, of=of)
        prepared(x[:10])  # the sweep's module, generated and imported: its own first call
        start = time.perf_counter()
        P = prepared(x)
        sweep = time.perf_counter() - start
        start = time.perf_counter()
        (star_colouring if of == "hessian" else column_colouring)(P)
        colour = time.perf_counter() - start
        total = sweep + colour
        ratio = f"{total / compile_s:.2f}" if compile_s else "-"
        found[name] = (total, compile_s)
        lines.append(f"| {name} | {_fmt(sweep)} | {_fmt(colour)} | {_fmt(total)} | {_fmt(compile_s)} | {ratio} |")
    return lines, found


def sparse_report() -> str:
    jac_lines, jac_goal = jacobian_rows()
    hess_lines, hess_goal = hessian_rows()
    first_lines, first = first_call_rows()
    out = ["## Sparse Jacobians and Hessians (issue 41)", ""]
    out += ["Banded residual (loops), Jacobian:", "", *jac_lines, ""]
    out += ["Chained Rosenbrock (a loop), Hessian:", "", *hess_lines, ""]
    out += ["Colours of patterns read from code:", "", *colour_rows(), ""]
    out += ["Pattern and colouring on the first call:", "", *first_lines, ""]
    out.append("Goals:")
    if jac_goal:
        verdict = "met" if jac_goal["ratio"] <= 10 else "missed"
        out.append(
            f"- sparse Jacobian / numba primal at n = {jac_goal['n']} <= 10: {verdict} ({jac_goal['ratio']:.1f})."
        )
    if hess_goal:
        verdict = "met" if hess_goal["ratio"] <= 12 else "missed"
        out.append(f"- sparse Hessian / gradient at n = {hess_goal['n']} <= 12: {verdict} ({hess_goal['ratio']:.1f}).")
    for name, (total, compile_s) in first.items():
        if compile_s:
            verdict = "met" if total <= 2 * compile_s else "missed"
            out.append(f"- pattern + colouring <= 2 gradient compiles ({name}): {verdict} ({total / compile_s:.2f}x).")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(sparse_report())
