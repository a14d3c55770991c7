"""Start-up and per-call cost of prepared derivatives: ``python -m benchmarks.startup``.

Prints a markdown table (``startup_report()`` returns it):
  * first call, cold: seconds from ``sourcead.grad(f, wrt=...)`` to the end of its first call, in
    a new process with fresh, empty SOURCEAD_CACHE_DIR and NUMBA_CACHE_DIR (transform, write,
    compile, call); imports excluded;
  * first call, warm: the same in another new process on the same folders (the generated module
    and numba's machine code come from disk; the pipeline does not run);
  * warm / cold, and the floor: a plain ``numba.njit(cache=True)`` function's warm first call in a
    new process (numba's own per-process set-up, which every numba user pays);
  * per-call overhead: a prepared derivative on a tiny input minus a direct call of the very
    dispatcher it wraps, in microseconds.
All figures are medians of repeats.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
GOAL_WARM_OVER_COLD = 1 / 3
GOAL_OVERHEAD_US = 5.0


def tiny_sum_squares(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    return s


def _heat():
    from examples.heat import example_args, heat_loss

    return heat_loss, example_args(), ("u0", "kappa")


def _tiny():
    return tiny_sum_squares, (np.array([0.5, -1.0, 2.0]),), 0


WORKLOADS = {"tiny_sum_squares": _tiny, "heat": _heat}


def _first_call(name: str) -> dict:
    """Run in the child process: time preparation and first call of one workload."""
    import sourcead

    func, args, wrt = WORKLOADS[name]()
    start = time.perf_counter()
    g = sourcead.grad(func, wrt=wrt)
    prepared = time.perf_counter()
    g(*args)
    end = time.perf_counter()
    return {"prepare": prepared - start, "first_call": end - start}


def _numba_floor() -> dict:
    """Run in the child process: a plain cached njit function's first call."""
    import numba

    start = time.perf_counter()
    numba.njit(cache=True, nogil=True)(tiny_sum_squares)(np.ones(3))
    return {"first_call": time.perf_counter() - start}


_CHILD = "import json, sys; from benchmarks import startup as s; print(json.dumps({}))"


def _in_new_process(call: str, env: dict) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD.format(call)], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def first_calls(name: str, repeats: int) -> tuple[float, float, float]:
    """Median cold and warm first-call seconds of a workload, and the warm preparation alone."""
    cold, warm, prepare = [], [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, SOURCEAD_CACHE_DIR=f"{tmp}/sourcead", NUMBA_CACHE_DIR=f"{tmp}/numba")
            cold.append(_in_new_process(f"s._first_call({name!r})", env)["first_call"])
            sample = _in_new_process(f"s._first_call({name!r})", env)
            warm.append(sample["first_call"])
            prepare.append(sample["prepare"])
    return statistics.median(cold), statistics.median(warm), statistics.median(prepare)


def numba_floor(repeats: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, NUMBA_CACHE_DIR=f"{tmp}/numba")
        # the function lives in this file: its numba cache goes to NUMBA_CACHE_DIR, fresh here
        _in_new_process("s._numba_floor()", env)
        return statistics.median(_in_new_process("s._numba_floor()", env)["first_call"] for _ in range(repeats))


def _median_us(fn, args, kwargs, repeats=7, number=20_000) -> float:
    fn(*args, **kwargs)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn(*args, **kwargs)
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times) * 1e6


def per_call_overheads() -> list[tuple[str, float, float]]:
    """(what, µs per call of the prepared derivative, µs of a direct call of its dispatcher)."""
    import sourcead

    x = np.array([0.5, -1.0, 2.0])
    buffer = np.empty(3)
    g = sourcead.grad(tiny_sum_squares)
    vg = sourcead.value_and_grad(tiny_sum_squares)
    vf = sourcead.vjp(tiny_sum_squares)
    jf = sourcead.jvp(tiny_sum_squares)
    reverse, forward = _dispatcher(g), _dispatcher(jf)
    t = np.ones(3)
    rows = [
        ("grad(f)(x)", g, (x,), {}, reverse, (x, 1.0)),
        ("grad(f)(x, out=buf)", g, (x,), {"out": buffer}, reverse, (x, 1.0)),
        ("value_and_grad(f)(x)", vg, (x,), {}, reverse, (x, 1.0)),
        ("vjp(f)(x, cotangent=1.0)", vf, (x,), {"cotangent": 1.0}, reverse, (x, 1.0)),
        ("jvp(f)(x, tangents=t)", jf, (x,), {"tangents": t}, forward, (x, t)),
    ]
    return [(what, _median_us(fn, a, kw), _median_us(direct, da, {})) for what, fn, a, kw, direct, da in rows]


def _dispatcher(prepared):
    return prepared._default.call  # the numba dispatcher the prepared derivative calls


def startup_report(repeats: int = 3) -> str:
    """The markdown table of first-call (cold, warm) and per-call figures."""
    lines = [
        "## Start-up and per-call overhead",
        "",
        "| workload | first call cold | first call warm | warm / cold | warm - numba floor | preparation (warm) |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    floor = numba_floor(repeats)
    for name in WORKLOADS:
        cold, warm, prepare = first_calls(name, repeats)
        lines.append(
            f"| {name} | {cold * 1e3:.0f} ms | {warm * 1e3:.0f} ms | {warm / cold:.2f} "
            f"| {(warm - floor) * 1e3:.0f} ms | {prepare * 1e3:.1f} ms |"
        )
    lines += [
        "",
        f"Floor: a plain `numba.njit(cache=True)` function's warm first call in a new process: {floor * 1e3:.0f} ms "
        f"(numba's per-process set-up). Goal: warm / cold <= {GOAL_WARM_OVER_COLD:.2f}.",
        "",
        "| call (x: 3 floats) | prepared | direct dispatcher call | overhead |",
        "|---|--:|--:|--:|",
    ]
    for what, prepared, direct in per_call_overheads():
        lines.append(f"| `{what}` | {prepared:.2f} µs | {direct:.2f} µs | {prepared - direct:.2f} µs |")
    lines += [
        "",
        f"Goal: overhead <= {GOAL_OVERHEAD_US:.0f} µs. First calls: medians of {repeats} new processes, imports "
        "excluded; cold uses fresh, empty SOURCEAD_CACHE_DIR and NUMBA_CACHE_DIR. Per call: medians of 7 batches "
        "of 20,000 calls.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="new processes per first-call figure (default 3)")
    print(startup_report(parser.parse_args().repeats), end="")


if __name__ == "__main__":
    main()
