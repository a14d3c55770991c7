"""Derivatives inside differentiated code (issue 42): the "Nested derivatives" section of `make bench`.

* simulate (tests/programs' contract example, written here again): the outer gradient against the
  forward simulation that calls `force` (the inner gradient included), and the outer tape at 10^4
  steps (`benchmarks/tape.py` counts the forward sweep's records; with or without `memory=`);
* GradBench's ``particle`` and ``saddle`` (`benchmarks/gradbench_tool/`), all four variants: one
  outer derivative at GradBench's input and the whole argmin, against JAX's nested forms
  (`jit(grad(... grad ...))`, jvp for forward mode) on the same input, JAX in a child process of
  its own. JAX cannot reverse-differentiate a `while_loop`, so its particle runs a fixed number
  of Euler steps (enough to cross the axis) with the crossing masked, as JAX users write it.

`python -m benchmarks.nested` prints the section.
"""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import sys
import time

import numpy as np

import sourcead
from benchmarks.gradbench_tool import particle, saddle


def energy(x, q):
    """The contract's potential, in numba's loop style."""
    e = 0.0
    for i in range(x.shape[0]):
        xi = x[i]
        e += q * xi * xi * xi * xi / 4.0 + q * q * math.sin(xi)
    return e


energy_grad = sourcead.grad(energy, wrt=0)


def simulate(x0, q, dt, steps):
    x = x0.copy()
    v = np.zeros_like(x0)
    for _ in range(steps):
        v = v - dt * energy_grad(x, q)
        x = x + dt * v
    return np.sum(x * x)


def simulate_loops(x0, q, dt, steps):
    """The same in numba's loop style: the state updated element by element."""
    n = x0.shape[0]
    x = x0.copy()
    v = np.zeros(n)
    for _ in range(steps):
        f = energy_grad(x, q)
        for i in range(n):
            v[i] = v[i] - dt * f[i]
            x[i] = x[i] + dt * v[i]
    s = 0.0
    for i in range(n):
        s += x[i] * x[i]
    return s


def best(fn, *args, repeats=7, **kwargs) -> float:
    """The median of `repeats` timed batches, per call (seconds)."""
    fn(*args, **kwargs)
    times = []
    for _ in range(repeats):
        n, start = 0, time.perf_counter()
        while True:
            fn(*args, **kwargs)
            n += 1
            elapsed = time.perf_counter() - start
            if elapsed > 0.05:
                break
        times.append(elapsed / n)
    return statistics.median(times)


def simulate_rows(steps: int = 1000, n: int = 3) -> list[str]:
    x0 = np.linspace(-0.5, 0.5, n)
    rows = []
    for what, func in (("whole arrays", simulate), ("loops", simulate_loops)):
        t_primal = best(sourcead.differentiable(func), x0, 0.7, 0.01, steps)
        t_grad = best(sourcead.grad(func, wrt=(0, 1)), x0, 0.7, 0.01, steps)
        rows.append(
            f"| simulate ({what}), {n} coordinates, {steps} steps | {t_primal * 1e6:.1f} µs | "
            f"{t_grad * 1e6:.1f} µs | {t_grad / t_primal:.2f} | <= 4 |"
        )
    g = sourcead.grad(simulate, wrt=(0, 1))
    from benchmarks.tape import forward_sweep

    sweep = forward_sweep(simulate, ("x0", "q"))
    top, itop, _ = sweep(x0, 0.7, 0.01, 10_000, 1.0)
    tape = 8 * (int(top) + int(itop))
    g_small = sourcead.grad(simulate, wrt=(0, 1), memory="64kB")
    exact = g(x0, 0.7, 0.01, 10_000)
    bounded = g_small(x0, 0.7, 0.01, 10_000)
    same = np.allclose(exact[0], bounded[0], rtol=1e-12) and abs(exact[1] - bounded[1]) <= 1e-12 * abs(exact[1])
    return [
        *rows,
        "",
        f"Outer tape of simulate at 10^4 steps ({n} coordinates): {tape:,} bytes "
        f"({tape / 10_000:.0f} bytes a step: the state, never the inner gradient's tape); with "
        f'`memory="64kB"` the same gradient ({"bit for bit" if same else "DIFFERENT"}) from checkpoints.',
    ]


def sourcead_particle_and_saddle() -> dict[str, dict[str, float]]:
    times: dict[str, dict[str, float]] = {}
    w = np.array([0.0])
    start = np.array([1.0, 1.0])
    for v in ("rr", "fr", "rf", "ff"):
        _, gradient = particle.outer(v, True)
        run = particle.solver(v, True)
        _, sgradient = saddle.outer(v, True, start)
        srun = saddle.solver(v, True)
        times[v] = {
            "particle_grad": best(gradient, w),
            "particle_argmin": best(run, 0.0, repeats=3),
            "saddle_grad": best(sgradient, start),
            "saddle_argmin": best(srun, start, repeats=3),
        }
    return times


def jax_child() -> None:
    """In a process of its own: JAX's nested forms, timed, as JSON on stdout."""
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    def potential(x, w):
        a = x[0] - 10.0
        b = x[1] - (10.0 - w)
        return 1.0 / jnp.sqrt(a * a + b * b) + 1.0 / jnp.sqrt(a * a + x[1] * x[1])

    force_r = jax.grad(potential, argnums=0)
    eye = jnp.eye(2)

    def force_f(x, w):
        return jnp.stack([jax.jvp(lambda y: potential(y, w), (x,), (eye[k],))[1] for k in range(2)])

    def crossing(w, force, steps=400):  # the particle crosses the axis after 353 steps at w = 0
        def step(carry, _):
            x, xdot, done, result = carry
            xddot = -force(x, w)
            xn = x + 0.1 * xdot
            cross = jnp.logical_and(jnp.logical_not(done), xn[1] <= 0.0)
            dt_f = -xn[1] / jnp.where(cross, xdot[1], 1.0)
            x_f = xn[0] + dt_f * xdot[0]
            result = jnp.where(cross, x_f * x_f, result)
            stop = jnp.logical_or(done, cross)
            return (jnp.where(done, x, xn), jnp.where(stop, xdot, xdot + 0.1 * xddot), stop, result), None

        init = (jnp.array([0.0, 8.0]), jnp.array([0.75, 0.0]), jnp.array(False), jnp.array(0.0))
        return jax.lax.scan(step, init, None, length=steps)[0][3]

    out = {}
    w = jnp.float64(0.0)
    for v in ("rr", "fr", "rf", "ff"):
        force_v = force_r if v[1] == "r" else force_f

        def objective(w, force_v=force_v):
            return crossing(w, force_v)

        if v[0] == "r":
            derivative = jax.jit(jax.grad(objective))
        else:
            derivative = jax.jit(lambda w, objective=objective: jax.jvp(objective, (w,), (1.0,))[1])
        value = float(derivative(w))
        timed = best(lambda d=derivative: jax.block_until_ready(d(w)))
        out[v] = {"particle_grad": timed, "value": value}
    saddle_peer(jax, jnp, out)
    print(json.dumps(out))


def saddle_peer(jax, jnp, out: dict) -> None:
    """JAX's saddle outer gradient: the inner argmax a `lax.while_loop` (gd.hpp's steps, branches
    as `where`); forward mode differentiates through it, reverse mode cannot (JAX refuses)."""

    def f(p1, p2):
        return (p1[0] * p1[0] + p1[1] * p1[1]) - (p2[0] * p2[0] + p2[1] * p2[1])

    eye = jnp.eye(2)
    grads = {
        "r": jax.grad(f, argnums=1),
        "f": lambda p1, y: jnp.stack([jax.jvp(lambda z: f(p1, z), (y,), (eye[k],))[1] for k in range(2)]),
    }

    def max_y(p1, start, grad_y):
        def body(s):
            y, fy, gy, i, eta, _ = s
            small = jnp.sqrt(jnp.sum(gy * gy)) <= 1e-5
            ten = i == 10
            y_prime = y - eta * gy
            close = jnp.sqrt(jnp.sum((y - y_prime) ** 2)) <= 1e-5
            fy_prime = -f(p1, y_prime)
            rest = jnp.logical_not(small | ten | close)
            accept = rest & (fy_prime < fy)
            shrink = rest & jnp.logical_not(fy_prime < fy)
            return (
                jnp.where(accept, y_prime, y),
                jnp.where(accept, fy_prime, fy),
                jnp.where(accept, -grad_y(p1, y_prime), gy),
                jnp.where(ten | shrink, 0, jnp.where(accept, i + 1, i)),
                jnp.where(ten, eta * 2.0, jnp.where(shrink, eta / 2.0, eta)),
                jnp.logical_not(small | (jnp.logical_not(ten) & close)),
            )

        init = (start, -f(p1, start), -grad_y(p1, start), 0, 1e-5, jnp.array(True))
        y = jax.lax.while_loop(lambda s: s[5], body, init)[0]
        return f(p1, y)

    start = jnp.array([1.0, 1.0])
    p1 = jnp.array([1.0, 1.0])
    for v in ("rr", "fr", "rf", "ff"):
        grad_y = grads[v[1]]

        def objective(p1, grad_y=grad_y):
            return max_y(p1, start, grad_y)

        try:
            if v[0] == "r":
                derivative = jax.jit(jax.grad(objective))
            else:
                derivative = jax.jit(
                    lambda p, objective=objective: jnp.stack([jax.jvp(objective, (p,), (eye[k],))[1] for k in range(2)])
                )
            derivative(p1)
            out[v]["saddle_grad"] = best(lambda d=derivative: jax.block_until_ready(d(p1)))
        except Exception as exc:  # reverse mode through a while_loop
            out[v]["saddle_grad"] = type(exc).__name__


def jax_times() -> dict | str:
    try:
        import jax  # noqa: F401
    except ImportError as exc:
        return f"JAX not installed ({exc})"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.nested", "--jax-child"], capture_output=True, text=True, timeout=900
    )
    if done.returncode != 0:
        return "JAX failed: " + (done.stderr.strip().splitlines() or ["?"])[-1]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _vs(theirs, ours: float) -> str:
    """JAX's time and how many times faster sourcead is, or why JAX has none."""
    if theirs is None:
        return "- | - |"
    if isinstance(theirs, str):
        return f"refused ({theirs}: reverse mode through `while_loop`) | - |"
    return f"{theirs * 1e6:.1f} µs | {theirs / ours:.1f}x |"


def nested_report() -> str:
    lines = [
        "## Nested derivatives (issue 42)",
        "",
        "| case | forward simulation | outer gradient | ratio | goal |",
        "|---|---|---|---|---|",
        *simulate_rows(),
        "",
    ]
    ours = sourcead_particle_and_saddle()
    peer = jax_times()
    lines += [
        "GradBench's particle and saddle at their eval inputs (w = 0; start = (1, 1)): one outer "
        "derivative, and the whole argmin (saddle: argmin, then argmax), sourcead against JAX's "
        "nested jit(grad)/jvp forms. " + (peer if isinstance(peer, str) else ""),
        "",
        "| variant | particle: outer derivative | JAX | ratio | particle argmin | saddle: outer gradient | JAX "
        "| ratio | saddle argmin |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for v, t in ours.items():
        jx = peer[v]["particle_grad"] if isinstance(peer, dict) else None
        lines.append(
            f"| {v} | {t['particle_grad'] * 1e6:.1f} µs | "
            + _vs(jx, t["particle_grad"])
            + f" {t['particle_argmin'] * 1e3:.2f} ms | {t['saddle_grad'] * 1e6:.1f} µs | "
            + _vs(peer[v].get("saddle_grad") if isinstance(peer, dict) else None, t["saddle_grad"])
            + f" {t['saddle_argmin'] * 1e3:.2f} ms |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if "--jax-child" in sys.argv:
        jax_child()
    else:
        print(nested_report())
