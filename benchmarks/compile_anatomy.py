"""Where a cold first call goes: ``python -m benchmarks.compile_anatomy [--repeats R] [names]``.

For each workload of ``benchmarks.gradbench_workloads`` and each NPBench kernel of
``benchmarks.npbench.KERNELS`` named (``names``: GradBench-style names, NPBench names, or
``npbench`` for every kernel sourcead differentiates; the tests' small sizes, since numba's
compile does not depend on them), in new processes with new, empty numba and sourcead cache
folders (a cold first call, as ``benchmarks.gradbench`` measures it), it splits the seconds from
``sourcead.grad(f, wrt=...)`` to the end of its first call into
  * transform: sourcead's passes, from the function to the generated module's text (libcst,
    the analyses, the emitters; the first use imports the pipeline and libcst);
  * compile, the generated function: numba's typing, lowering and LLVM of the gradient itself,
    itself split (from numba's compile metadata, ``pipeline_times`` and, with ``--llvm``
    (NUMBA_LLVM_PASS_TIMINGS=1 in the child, which slows the compile a lot), ``llvm_pass_timings``) into numba's typing
    (type inference and the passes before it), numba's parfor passes (parallel modules only),
    numba's lowering to LLVM IR (Python) and LLVM (optimisation passes and machine code, the
    function's own); typing and lowering include the helpers numba compiles inside them;
  * compile, helpers: everything numba compiles for it as functions of their own (sourcead's
    runtime helpers such as ``reserve``, and NumPy's overloads, ``np.empty``, ``np.zeros_like``);
  * the rest (the call itself, loading the module, numba's first-use set-up);
and prints the same split of numba's cold compile of the primal (NPBench's kernels compiled as
``benchmarks.npbench.bench`` does, ``njit(fastmath=True)``), with the line counts of the primal
and of the generated module. Medians of ``--repeats`` processes (default 3). The figures feed the
"cold first call" sections of ``benchmarks/README.md``.
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
PARTS = ("transform", "generated", "helpers", "rest", "typing", "parfors", "lowering", "llvm")


def _compile_split(events, total: float) -> dict:
    """Seconds of the outermost compile (exclusive of what it compiles inside) and of the nested
    ones, from numba's `numba:compile` events, and the outermost compile's own split
    (`_passes_split`)."""
    own = nested = 0.0
    stack: list[list[float]] = []
    outer = []
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
            outer.append(ev.data["dispatcher"])
    split = {"typing": 0.0, "parfors": 0.0, "lowering": 0.0, "llvm": 0.0}
    for dispatcher in outer:
        for cres in dispatcher.overloads.values():
            for key, value in _passes_split(cres.metadata).items():
                split[key] += value
    return {"generated": own, "helpers": nested, "rest": total - own - nested, **split}


def _passes_split(metadata: dict) -> dict:
    """One compile's seconds by numba pass: typing (the passes up to type inference), parfors
    (numba's parallel passes), lowering (numba's lowering to LLVM IR and what follows it, less
    LLVM's own time) and LLVM (its optimisation passes and machine code, where
    NUMBA_LLVM_PASS_TIMINGS=1 recorded them, the function's own). numba compiles helpers inside
    its typing and its lowering passes: those two include them (the "helpers" column)."""
    typing = parfors = lowering = 0.0
    for pipeline in metadata.get("pipeline_times", {}).values():
        for name, times in pipeline.items():
            spent = times.init + times.run + times.finalize
            if "parfor" in name.lower() or "prange" in name.lower():
                parfors += spent
            elif "lowering" in name:
                lowering += spent
            else:
                typing += spent
    llvm = sum(record.timings.get_total_time() for record in metadata.get("llvm_pass_timings") or ())
    return {"typing": typing, "parfors": parfors, "lowering": max(lowering - llvm, 0.0), "llvm": llvm}


def _workload(name: str):
    """(function, arguments, wrt, numba's compile of the primal) of a GradBench-style workload or
    an NPBench kernel (at the tests' sizes)."""
    import numba

    from benchmarks.gradbench import uses_prange
    from benchmarks.gradbench_workloads import GB_BY_NAME

    if name in GB_BY_NAME:
        w = GB_BY_NAME[name]
        primal = numba.njit(w.func, cache=True, nogil=True, parallel=uses_prange(w.func))
        return w.func, w.make_args(), w.wrt, primal
    from benchmarks.npbench import KERNELS
    from benchmarks.npbench.bench import numba_primal

    kernel = KERNELS[name]
    args = kernel.args("small")
    return kernel.objective, args, kernel.wrt(args), numba_primal(kernel.objective)


def _names(asked: list[str]) -> list[str]:
    from benchmarks.gradbench_workloads import GB_WORKLOADS
    from benchmarks.npbench import KERNELS

    if not asked:
        return [w.name for w in GB_WORKLOADS]
    npbench = [k.name for k in KERNELS.values() if k.status == "ok"]
    return [n for name in asked for n in (npbench if name == "npbench" else [name])]


def child(name: str, tool: str) -> None:
    from numba.core import event

    import sourcead

    func, args, wrt, primal = _workload(name)
    start, cpu = time.perf_counter(), time.process_time()
    with event.install_recorder("numba:compile") as rec:
        if tool == "sourcead":
            g = sourcead.grad(func, wrt=wrt)
            transform = time.perf_counter() - start
            g(*args)
        else:
            transform = 0.0
            primal(*args)
    total = time.perf_counter() - start
    split = _compile_split(rec.buffer, total - transform)
    folder = Path(os.environ["SOURCEAD_CACHE_DIR"])
    lines = sum(len(p.read_text().splitlines()) for p in folder.glob("sourcead_*.py")) if tool == "sourcead" else 0
    entries = sorted({_name(ev.data["dispatcher"]) for ev in _outermost(rec.buffer)})
    print(
        json.dumps(
            {
                "total": total,
                "cpu": time.process_time() - cpu,
                "transform": transform,
                "lines": lines,
                "entries": entries,
                **split,
            }
        )
    )


def _outermost(events):
    """The end events of the outermost compiles: the functions the first call compiled itself."""
    depth = 0
    for _ts, ev in events:
        depth += 1 if ev.is_start else -1
        if not ev.is_start and depth == 0:
            yield ev


def _name(dispatcher) -> str:
    py = getattr(dispatcher, "py_func", None)
    return getattr(py, "__name__", str(dispatcher))


def _run_child(name: str, tool: str, llvm: bool = False) -> dict:
    with tempfile.TemporaryDirectory(prefix="sourcead-ca-") as tmp:
        env = dict(
            os.environ,
            SOURCEAD_CACHE_DIR=f"{tmp}/sourcead",
            NUMBA_CACHE_DIR=f"{tmp}/numba",
            NUMBA_LLVM_PASS_TIMINGS="1" if llvm else os.environ.get("NUMBA_LLVM_PASS_TIMINGS", "0"),
            PYTHONPATH=str(ROOT),
        )
        cmd = [sys.executable, "-m", "benchmarks.compile_anatomy", "--child", name, tool]
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError((proc.stderr.strip().splitlines() or ["child failed"])[-1])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--llvm",
        action="store_true",
        help="record LLVM's pass timings (NUMBA_LLVM_PASS_TIMINGS=1): fills the LLVM column, but the "
        "recording itself slowed heat_3d's cold call from 71 to 243 s, so the totals are not a cold call's",
    )
    parser.add_argument("--child", nargs=2, metavar=("NAME", "TOOL"), help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    if opts.child:
        child(*opts.child)
        return
    print(
        "| workload | lines: primal, generated | numba primal cold (CPU) | sourcead cold (CPU) | ratio (CPU) "
        "| first call compiles | transform | compile: generated "
        "| typing, parfors, lowering (with helpers), LLVM | compile: helpers | rest "
        "| numba primal: own, helpers |"
    )
    print("|" + "---|" * 12)
    for name in _names(opts.names):
        print(f"[{name}] ...", file=sys.stderr, flush=True)
        runs: dict[str, list[dict]] = {tool: [] for tool in ("sourcead", "numba")}
        try:
            for _ in range(opts.repeats):
                for tool in runs:
                    runs[tool].append(_run_child(name, tool, opts.llvm))
        except RuntimeError as exc:
            print(f"| {name} | failed: {exc} |", flush=True)
            continue
        keys = ("total", "cpu", "lines", *PARTS)
        med = {tool: {k: statistics.median(r[k] for r in rs) for k in keys} for tool, rs in runs.items()}
        s, n = med["sourcead"], med["numba"]
        primal = len(inspect.getsource(_workload(name)[0]).splitlines())
        generated = int(s["lines"])
        entries = ", ".join(runs["sourcead"][0]["entries"])
        print(
            f"| {name} | {primal}, {generated} | {n['total']:.2f} s ({n['cpu']:.2f}) "
            f"| {s['total']:.2f} s ({s['cpu']:.2f}) | {s['total'] / n['total']:.1f}x ({s['cpu'] / n['cpu']:.1f}x) "
            f"| {entries} "
            f"| {s['transform']:.2f} | {s['generated']:.2f} "
            f"| {s['typing']:.2f}, {s['parfors']:.2f}, {s['lowering']:.2f}, {s['llvm']:.2f} "
            f"| {s['helpers']:.2f} | {s['rest']:.2f} "
            f"| {n['generated']:.2f}, {n['helpers']:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
