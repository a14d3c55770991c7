"""The "NPBench" section of ``make bench``: each kernel as written, NPBench's S preset, one thread.

Per kernel, a child process with a fresh sourcead cache measures: the gradient's first call
(sourcead's transformation and numba's compile of the generated code: "cold"), then interleaved
medians of the primal (NPBench's own setting: ``njit(fastmath=True)``, the objective and the
kernel and its helpers compiled together) and the gradient. A second child on the now warm cache
times the gradient's first call again ("warm": import, cache load, one run); a third times
numba's compile of the primal, as cold as the gradient's (compiled after the gradient in one
process, it found numba set up and the NumPy overloads both use compiled). A fourth child runs
JAX's ``jit(grad)`` of the port in ``jax_ports`` (each run waits with ``block_until_ready``).
Every child has BLAS, numba and XLA on one thread and a time limit.

``python -m benchmarks.npbench.bench [--quick] [--timeout S] [NAMES...]``; ``--quick`` uses the
tests' sizes times a few: a check of the whole machinery, not much shorter than the S run,
since numba's compiles take most of either (825 s against 1511 s on a loaded machine).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
ONE_THREAD = {
    "NUMBA_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
}
QUICK_SCALE = 3  # --quick: the tests' small sizes times this (loop counts kept)
LOOP_SIZES = {"TSTEPS", "TMAX", "nt", "nit", "tEnd", "dt", "npt", "K"}


def sizes(kernel, quick: bool) -> dict:
    if not quick:
        return kernel.bench or kernel.S
    return {k: (v if k in LOOP_SIZES or not isinstance(v, int) else v * QUICK_SCALE) for k, v in kernel.small.items()}


def numba_primal(fn, done=None):
    """fn compiled by numba as NPBench compiles its kernels, with the functions it calls from the
    npbench modules compiled the same way (a copy of fn whose globals name the compiled callees)."""
    import numba

    done = {} if done is None else done
    if fn in done:
        return done[fn]
    scope = dict(fn.__globals__)
    for name in fn.__code__.co_names:
        callee = scope.get(name)
        if isinstance(callee, types.FunctionType) and callee.__module__.startswith("benchmarks.npbench"):
            scope[name] = numba_primal(callee, done)
    copy = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__)
    done[fn] = numba.njit(fastmath=True)(copy)
    return done[fn]


def median_seconds(fn, args, batch_seconds=0.02):
    """Seconds per call of fn(*args), batched so one sample lasts at least batch_seconds."""
    start = time.perf_counter()
    fn(*args)
    once = time.perf_counter() - start
    n = max(1, int(batch_seconds / max(once, 1e-9)))
    start = time.perf_counter()
    for _ in range(n):
        fn(*args)
    return (time.perf_counter() - start) / n


def interleaved(fns, args, repeats=7):
    samples = [[] for _ in fns]
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            samples[i].append(median_seconds(fn, args))
    return [float(np.median(s)) for s in samples]


def child_cold(name: str, quick: bool) -> dict:
    import sourcead as ad
    from benchmarks.npbench import KERNELS

    kernel = KERNELS[name]
    args = kernel.init(**sizes(kernel, quick))
    wrt = kernel.wrt(args)
    grad = ad.grad(kernel.objective, wrt=wrt)
    start = time.perf_counter()
    try:
        grad(*args)
    except ad.SourceADError as exc:
        return {"refused": str(exc).strip().splitlines()[0]}
    cold = time.perf_counter() - start
    primal = numba_primal(kernel.objective)
    primal(*args)
    t_primal, t_grad = interleaved([primal, grad], args, repeats=3 if quick else 7)
    return {"cold": cold, "primal": t_primal, "grad": t_grad}


def child_numba(name: str, quick: bool) -> dict:
    """numba's compile of the primal in a process of its own, as cold as the gradient's first call
    (compiled after the gradient in one process, it found numba set up and the NumPy overloads the
    two share, `@` and `np.sum`, compiled)."""
    from benchmarks.npbench import KERNELS

    kernel = KERNELS[name]
    args = kernel.init(**sizes(kernel, quick))
    primal = numba_primal(kernel.objective)
    start = time.perf_counter()
    primal(*args)
    first = time.perf_counter() - start
    (t_primal,) = interleaved([primal], args, repeats=3)
    return {"numba_compile": first - t_primal}


def child_warm(name: str, quick: bool) -> dict:
    import sourcead as ad
    from benchmarks.npbench import KERNELS

    kernel = KERNELS[name]
    args = kernel.init(**sizes(kernel, quick))
    start = time.perf_counter()
    ad.grad(kernel.objective, wrt=kernel.wrt(args))(*args)
    return {"warm": time.perf_counter() - start}


def child_jax(name: str, quick: bool) -> dict:
    import jax

    from benchmarks.npbench import KERNELS
    from benchmarks.npbench.jax_ports import port

    kernel = KERNELS[name]
    made = port(name, kernel.init(**sizes(kernel, quick)))
    if isinstance(made, str):
        return {"jax": made}
    f, arrays = made
    grad = jax.jit(jax.grad(f, argnums=tuple(range(len(arrays)))))
    try:
        jax.block_until_ready(grad(*arrays))
    except Exception as exc:  # JAX refuses some reverse modes (fori_loop with dynamic bounds)
        text = str(exc).splitlines()[0]
        return {"jax": "refused: fori_loop with dynamic bounds" if "dynamic start/stop" in text else text[:60]}
    (t,) = interleaved([lambda *a: jax.block_until_ready(grad(*a))], arrays, repeats=3 if quick else 5)
    return {"jax_grad": t}


CHILDREN = {"cold": child_cold, "warm": child_warm, "numba": child_numba, "jax": child_jax}


def run_child(kind: str, name: str, quick: bool, cache: str, timeout: float) -> dict:
    env = os.environ | ONE_THREAD | {"SOURCEAD_CACHE_DIR": cache, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "benchmarks.npbench.bench", "--child", kind, *(["--quick"] if quick else []), name]
    try:
        done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {f"{kind}_timeout": timeout}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {f"{kind}_failed": tail[:100]}
    return json.loads(lines[-1])


def measure(name: str, quick: bool, timeout: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="npbench-cache-") as cache:
        res = run_child("cold", name, quick, cache, timeout)
        if "cold" in res:
            res |= run_child("warm", name, quick, cache, timeout)
            res |= run_child("numba", name, quick, cache, timeout)
    if "grad" in res:
        res |= run_child("jax", name, quick, cache, timeout)
    return res


def fmt(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds >= 1.0:
        return f"{seconds:.1f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} us"


def row(name: str, kernel, res: dict) -> tuple[str, float | None]:
    ratio = res["grad"] / res["primal"] if "grad" in res else None
    if ratio is None:
        why = res.get("refused") or next((f"{k}: {v}" for k, v in res.items()), "")
        status = "refused" if "refused" in res else "not measured"
        return f"| {name} | {status} | {why[:110]} | | | | | | | |", None
    jax = res.get("jax_grad")
    jax_cell = f"{jax / res['primal']:.1f}" if jax else res.get("jax", next((k for k in res if "jax" in k), "-"))
    cells = [
        name,
        "ok",
        "",
        fmt(res["primal"]),
        fmt(res["grad"]),
        f"**{ratio:.2f}**",
        jax_cell,
        fmt(res["cold"]),
        fmt(res.get("numba_compile")),
        fmt(res.get("warm")),
    ]
    return "| " + " | ".join(str(c) for c in cells) + " |", ratio


def report(names=None, quick: bool = False, timeout: float | None = None) -> str:
    from benchmarks.npbench import KERNELS, LEFT_OUT

    timeout = timeout or (120.0 if quick else 150.0)
    start = time.perf_counter()
    chosen = [n for n in KERNELS if not names or n in names]
    lines = [
        "| kernel | status | reason | numba primal | gradient | grad/primal | JAX jit(grad)/primal "
        "| cold first call | numba compile of primal | warm first call |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    ratios = []
    for name in chosen:
        kernel = KERNELS[name]
        if kernel.status != "ok":  # the registry's reason; the tests' strict xfails say when it changes
            lines.append(f"| {name} | {kernel.status} | {kernel.reason} | | | | | | | |")
            continue
        text, ratio = row(name, kernel, measure(name, quick, timeout))
        lines.append(text)
        if ratio:
            ratios.append(ratio)
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else float("nan")
    preset = f"the tests' sizes x{QUICK_SCALE} (--quick)" if quick else "NPBench's S preset"
    return "\n".join(
        [
            "## NPBench",
            "",
            f"NPBench's kernels as their numba versions are written (`benchmarks/npbench`), {preset}, one "
            "thread. grad/primal: the gradient w.r.t. every float array argument over the numba primal "
            "(`njit(fastmath=True)` as NPBench runs it), interleaved medians. Cold first call: transformation "
            "and compile in a fresh process with an empty cache, against numba's compile of the primal, "
            "itself in a fresh process; "
            "warm first call: a new process on the filled cache. JAX: `jit(grad)` of the port in "
            "`benchmarks/npbench/jax_ports.py` over the same numba primal, each run waited for.",
            "",
            *lines,
            "",
            f"Geomean grad/primal over the {len(ratios)} kernels measured: **{geo:.2f}**. "
            f"Left out (not float): {', '.join(f'{k} ({v})' for k, v in LEFT_OUT.items())}. "
            f"Section time {time.perf_counter() - start:.0f} s.",
        ]
    )


def npbench_report() -> str:
    """The section of ``make bench`` (benchmarks/run.py); SOURCEAD_NPBENCH_QUICK=1 for the small sizes."""
    return report(quick=os.environ.get("SOURCEAD_NPBENCH_QUICK") == "1")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--timeout", type=float)
    parser.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    if opts.child:
        print(json.dumps(CHILDREN[opts.child](opts.names[0], opts.quick)))
        return 0
    print(report(opts.names, opts.quick, opts.timeout))
    return 0


if __name__ == "__main__":
    sys.exit(main())
