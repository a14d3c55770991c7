"""Where a cold first call goes: ``python -m benchmarks.compile_anatomy [--repeats R] [names]``.

For each workload of ``benchmarks.gradbench_workloads``, in new processes with new, empty numba
and sourcead cache folders (a cold first call, as ``benchmarks.gradbench`` measures it), it splits
the seconds from ``sourcead.grad(f, wrt=...)`` to the end of its first call into
  * transform: sourcead's passes, from the function to the generated module's text (libcst,
    the analyses, the emitters; the first use imports the pipeline and libcst);
  * compile, the generated function: numba's typing, lowering and LLVM of the gradient itself;
  * compile, helpers: everything numba compiles for it as functions of their own (sourcead's
    runtime helpers such as ``reserve``, and NumPy's overloads, ``np.empty``, ``np.zeros_like``);
  * the rest (the call itself, loading the module, numba's first-use set-up);
and prints the same split of numba's cold compile of the primal, with the line counts of the
primal and of the generated module. Medians of ``--repeats`` processes (default 3). The figures
feed the "cold first call" section of ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PARTS = ("transform", "generated", "helpers", "rest")


def _compile_split(events, total: float) -> dict:
    """Seconds of the outermost compile (exclusive of what it compiles inside) and of the nested
    ones, from numba's `numba:compile` events."""
    own = nested = 0.0
    stack: list[list[float]] = []
    for ts, ev in events:
        if ev.is_start:
            stack.append([ts, 0.0])
            continue
        start, inner = stack.pop()
        spent = ts - start
        if stack:
            stack[-1][1] += spent
            if len(stack) == 1:
                nested += spent
        else:
            own += spent - inner
    return {"generated": own, "helpers": nested, "rest": total - own - nested}


def child(name: str, tool: str) -> None:
    import numba
    from numba.core import event

    import sourcead
    from benchmarks.gradbench import uses_prange
    from benchmarks.gradbench_workloads import GB_BY_NAME

    workload = GB_BY_NAME[name]
    args = workload.make_args()
    start = time.perf_counter()
    with event.install_recorder("numba:compile") as rec:
        if tool == "sourcead":
            g = sourcead.grad(workload.func, wrt=workload.wrt)
            transform = time.perf_counter() - start
            g(*args)
        else:
            transform = 0.0
            numba.njit(workload.func, cache=True, nogil=True, parallel=uses_prange(workload.func))(*args)
    total = time.perf_counter() - start
    split = _compile_split(rec.buffer, total - transform)
    print(json.dumps({"total": total, "transform": transform, **split}))


def _run_child(name: str, tool: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="sourcead-ca-") as tmp:
        env = dict(os.environ, SOURCEAD_CACHE_DIR=f"{tmp}/sourcead", NUMBA_CACHE_DIR=f"{tmp}/numba")
        cmd = [sys.executable, "-m", "benchmarks.compile_anatomy", "--child", name, tool]
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError((proc.stderr.strip().splitlines() or ["child failed"])[-1])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _lines(workload) -> tuple[int, int]:
    from sourcead.pipeline.driver import generate

    primal = len(inspect.getsource(workload.func).splitlines())
    generated = generate(workload.func, "reverse", workload.wrt).source.count("\n")
    return primal, generated


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", nargs=2, metavar=("NAME", "TOOL"), help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    if opts.child:
        child(*opts.child)
        return
    from benchmarks.gradbench_workloads import GB_WORKLOADS

    chosen = [w for w in GB_WORKLOADS if not opts.names or w.name in opts.names]
    print(
        "| workload | lines: primal, generated | numba primal cold | sourcead cold | ratio "
        "| transform | compile: generated | compile: helpers | rest | numba primal: own, helpers |"
    )
    print("|" + "---|" * 10)
    for w in chosen:
        print(f"[{w.name}] ...", file=sys.stderr, flush=True)
        runs = {tool: [] for tool in ("sourcead", "numba")}
        for _ in range(opts.repeats):
            for tool in runs:
                runs[tool].append(_run_child(w.name, tool))
        med = {tool: {k: statistics.median(r[k] for r in rs) for k in ("total", *PARTS)} for tool, rs in runs.items()}
        s, n = med["sourcead"], med["numba"]
        primal, generated = _lines(w)
        print(
            f"| {w.name} | {primal}, {generated} | {n['total']:.2f} s | {s['total']:.2f} s "
            f"| {s['total'] / n['total']:.1f}x "
            f"| {s['transform']:.2f} | {s['generated']:.2f} | {s['helpers']:.2f} | {s['rest']:.2f} "
            f"| {n['generated']:.2f}, {n['helpers']:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
