"""Time sourcead gradients against the numba primal: ``python -m benchmarks.run``.

For every workload in ``benchmarks.workloads`` this measures, in one run:
  * steady state: median time of the primal (``numba.njit(f)``) and of the gradient
    (``sourcead.grad(f, wrt=...)``), their ratio, and a finite-difference check of the gradient;
  * first-call latency (transform + compile + first call), each sample in a new Python process:
    cold (fresh, empty SOURCEAD_CACHE_DIR and NUMBA_CACHE_DIR) and warm (same dirs again);
  * tape use (``benchmarks.tape``): bytes the forward sweep records, against the bytes of values
    the primal overwrites and of those the adjoint reads, and the forward sweep's share of the time;
  * on a full run, ``benchmarks.suite``: the same losses written twice (loops for sourcead, whole
    arrays for JAX, PyTorch and autograd, whichever are installed), with ``results/chart.png``;
  * on a full run, ``benchmarks.gradbench``: the GradBench-style set against hand-written numba
    adjoints and JAX ``jit(grad)``, with first calls against numba's compile of the primal;
  * on a full run, ``benchmarks.sparse``: sparse Jacobians and Hessians against the primal, a
    gradient, the dense transforms and JAX, colours against the optimum, first-call costs;
  * on a full run, ``benchmarks.checkpointing``: time loops under memory budgets (peak memory,
    gradient / primal, replays against revolve's optimum).
Prints markdown tables and writes them to ``benchmarks/results/latest.md``.
Exits 1 only if a gradient fails or disagrees with finite differences; other failures are listed.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numba
import numpy as np

import sourcead
from benchmarks.tape import WORD, forward_sweep, tape_use
from benchmarks.workloads import BY_NAME, WORKLOADS

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "latest.md"
FD_STEP = 1e-5
FD_TOLERANCE = 1e-5
GOAL_RATIO = ("heat_swap", 3.0)  # the goal: gradient / primal at most 3 on this workload


def median_seconds(fn, args, repeats=7, batch_seconds=0.05):
    """Median time of one call, from batches sized to last about ``batch_seconds`` each."""
    fn(*args)  # warm-up: compilation and first-call work stay out of the figure
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


def fd_error(primal, args, positions, grads, seed=0):
    """|FD - <grad, d>| / |grad|, central differences along one seeded random unit direction d."""
    rng = np.random.default_rng(seed)
    direction = {p: rng.standard_normal(np.shape(args[p])) for p in positions}
    norm = np.sqrt(sum(np.sum(d * d) for d in direction.values()))
    direction = {p: d / norm if d.ndim else float(d) / norm for p, d in direction.items()}

    def shifted(h):
        moved = list(args)
        for p, d in direction.items():
            moved[p] = args[p] + h * d
        return primal(*moved)

    fd = (shifted(FD_STEP) - shifted(-FD_STEP)) / (2.0 * FD_STEP)
    ad = sum(np.sum(g * direction[p]) for p, g in zip(positions, grads, strict=True))
    # scaled by |grad| (= the largest |<grad, d>| over unit d), not by |<grad, d>|: a direction
    # nearly orthogonal to the gradient makes the latter tiny and leaves only rounding noise
    grad_norm = np.sqrt(sum(np.sum(g * g) for g in grads))
    return abs(fd - ad) / max(grad_norm, abs(fd), 1e-300)


def steady_state(workload):
    """Primal and gradient medians, their ratio and the finite-difference error of one workload."""
    args = workload.make_args()
    params = list(inspect.signature(workload.func).parameters)
    positions = [params.index(name) for name in workload.wrt]
    primal = numba.njit(workload.func)
    grad = sourcead.grad(workload.func, wrt=workload.wrt)
    grads = grad(*args)
    if not isinstance(grads, tuple):  # the contract: a tuple `wrt` gives a tuple, even of one
        raise TypeError(f"wrt={workload.wrt} gave a {type(grads).__name__}, not a tuple")
    t_primal = median_seconds(primal, args)
    t_grad = median_seconds(grad, args)
    return {
        "args": args,
        "primal": t_primal,
        "grad": t_grad,
        "ratio": t_grad / t_primal,
        "fd_error": fd_error(primal, args, positions, grads),
    }


def tape_accounting(workload, args, t_grad):
    """Tape records of one call against the workload's analytic counts; the forward sweep's time."""
    sweep = forward_sweep(workload.func, workload.wrt)
    use = tape_use(workload, sweep, args)
    t_forward = median_seconds(sweep, (*args, 1.0))
    return {"use": use, "forward": t_forward, "forward_share": t_forward / t_grad}


def first_call_child(name):
    """In a fresh process: seconds from ``sourcead.grad`` to the end of the first call."""
    workload = BY_NAME[name]
    args = workload.make_args()
    start = time.perf_counter()
    sourcead.grad(workload.func, wrt=workload.wrt)(*args)
    print(json.dumps({"seconds": time.perf_counter() - start}))


def first_call_sample(name, cache_root):
    env = dict(os.environ)
    env["SOURCEAD_CACHE_DIR"] = str(cache_root / "sourcead")
    env["NUMBA_CACHE_DIR"] = str(cache_root / "numba")
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.run", "--first-call", name],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr else "child failed")
    return json.loads(proc.stdout.strip().splitlines()[-1])["seconds"]


def first_call(name, repeats):
    """Median cold and warm first-call latency; each cold sample starts from empty caches."""
    cold, warm = [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="sourcead-bench-") as tmp:
            cold.append(first_call_sample(name, Path(tmp)))
            warm.append(first_call_sample(name, Path(tmp)))
    c, w = statistics.median(cold), statistics.median(warm)
    return {"cold": c, "warm": w, "warm_over_cold": w / c}


def fmt_time(seconds):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def fmt_bytes(count):
    for unit, scale in (("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:.3g} {unit}"
    return f"{count} B"


def revision():
    """The commit measured, marked when sourcead/ has uncommitted changes (others may be editing)."""
    try:
        git = ["git", "-C", str(ROOT)]
        head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True)
        dirty = subprocess.run([*git, "status", "--porcelain", "--", "sourcead"], capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown revision"
    return head.stdout.strip() + (" + uncommitted sourcead/ changes" if dirty.stdout.strip() else "")


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{cpu}, {os.cpu_count()} CPUs; Python {platform.python_version()}, "
        f"numba {numba.__version__}, numpy {np.__version__}, "
        f"sourcead {getattr(sourcead, '__version__', '?')} at {revision()}; {platform.platform()}"
    )


HEADER = (
    "| workload | size | wrt | primal | gradient | gradient / primal | FD rel. error "
    "| first call cold | first call warm | warm / cold |\n"
    "|---|---|---|--:|--:|--:|--:|--:|--:|--:|"
)


def row(workload, res):
    """One markdown table row; a failed measurement shows as 'failed' (details under the table)."""
    s, f = res.get("steady"), res.get("first")
    cells = [workload.name, workload.size, ", ".join(workload.wrt)]
    if s:
        ratio, err = f"{s['ratio']:.2f}", f"{s['fd_error']:.1e}"
        cells += [fmt_time(s["primal"]), fmt_time(s["grad"]), ratio, err]
    else:
        cells += ["failed"] * 4
    if f:
        cells += [fmt_time(f["cold"]), fmt_time(f["warm"]), f"{f['warm_over_cold']:.2f}"]
    else:
        cells += ["failed"] * 3
    return "| " + " | ".join(cells) + " |"


TAPE_HEADER = (
    "| workload | wrt | tape (float64) | itape (int64) | tape bytes | overwritten bytes "
    "| tape / overwritten | needed bytes | forward sweep | forward / gradient "
    "| overwritten / needed (values) |\n"
    "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|"
)

TAPE_NOTES = (
    "Tape: `top` and `itop` at the end of the forward sweep of one call (cotangent 1.0), "
    "measured by running the generated reverse module cut at `# reverse sweep` "
    "(`benchmarks/tape.py`); tape bytes = 8 * (top + itop). Overwritten: the assignments of that "
    "call that replace a value held before (scalars assigned again, `+=` included, `for` counters "
    "excluded; array elements already holding a value from an argument, an allocation or an "
    "earlier write), 8 bytes each. Needed: of those, the values the adjoint reads. Both are "
    "analytic, from the formulas in the last column (n points or elements, steps, m rows). "
    "tape <= overwritten: the tape holds no more than the primal destroys; tape (float64) = needed: "
    "it holds nothing the adjoint does not read. itape holds control records (trip counts, "
    "branches taken), which the adjoint reads but which overwrite no value. "
    "Forward sweep: median time of the cut module, tape writes included."
)


def tape_row(workload, res):
    """One row of the tape table, or None when the workload has no counts or its tape failed."""
    t = res.get("tape")
    if t is None:
        return None
    use = t["use"]
    over = WORD * use.overwritten
    ratio = f"{use.bytes / over:.2f}" if over else "-"
    cells = [workload.name, ", ".join(workload.wrt), str(use.floats), str(use.ints)]
    cells += [fmt_bytes(use.bytes), fmt_bytes(over), ratio, fmt_bytes(WORD * use.needed)]
    cells += [fmt_time(t["forward"]), f"{t['forward_share']:.2f}", workload.counts]
    return "| " + " | ".join(cells) + " |"


def goals(rows):
    """The issue's two goals, each with the measured figure."""
    lines = []
    name, bound = GOAL_RATIO
    for w, res in rows:
        if w.name == name and res.get("steady"):
            ratio = res["steady"]["ratio"]
            verdict = "met" if ratio <= bound else "missed"
            lines.append(f"- gradient / primal on {name} <= {bound:g}: {verdict} ({ratio:.2f}).")
    extra = [
        f"{w.name} ({res['tape']['use'].floats - res['tape']['use'].needed:g} value(s))"
        for w, res in rows
        if res.get("tape") and res["tape"]["use"].floats > res["tape"]["use"].needed
    ]
    verdict = "met" if not extra else "missed: float64 records beyond what the adjoint reads in " + ", ".join(extra)
    lines.append(f"- no value on the tape that the adjoint does not read: {verdict}.")
    return lines


def module_section(module: str, function: str, title: str):
    """The markdown of `benchmarks.<module>.<function>()`; a failure is reported, never fatal."""
    try:
        report = getattr(importlib.import_module(f"benchmarks.{module}"), function)
        return [report().rstrip()]
    except ImportError as exc:  # it needs something this machine lacks
        return [f"{title} skipped: {exc}."]
    except Exception as exc:  # its failure must not discard the tables measured above
        return [f"{title} failed: {type(exc).__name__}: {exc}".splitlines()[0]]


def startup_section():
    """The start-up report of `benchmarks.startup`."""
    return module_section("startup", "startup_report", "Start-up report")


def peer_section():
    """The side-by-side comparison of `benchmarks.suite`; peers that are not installed are skipped."""
    try:
        from benchmarks.suite import run as run_suite

        return run_suite()
    except Exception as exc:  # its failure must not discard the tables measured above
        return [f"Peer comparison failed: {type(exc).__name__}: {exc}".splitlines()[0]]


def gradbench_section():
    """The GradBench-style set of `benchmarks.gradbench`, and whether one of its gradients was wrong."""
    try:
        from benchmarks.gradbench import run as run_gradbench

        return run_gradbench()
    except Exception as exc:  # its failure must not discard the tables measured above
        return [f"GradBench-style set failed: {type(exc).__name__}: {exc}".splitlines()[0]], True


def report(rows, repeats, extra=()):
    """The markdown report: tables, machine, method, failures, then any extra sections."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    method = (
        "Steady state: medians of 7 timed batches (each ~50 ms) after warm-up, in one process. "
        "FD rel. error: |FD - <grad, d>| / |grad|, central differences of the primal "
        f"(h = {FD_STEP:g}) along one seeded random unit direction d. First call: seconds from "
        "`sourcead.grad(f, wrt=...)` to the end of its first call (transform + compile + call), "
        f"each sample in a new process, median of {repeats}; cold = fresh, empty "
        "SOURCEAD_CACHE_DIR and NUMBA_CACHE_DIR; warm = a second process on the same caches."
    )
    lines = ["# sourcead benchmarks", "", HEADER, *(row(w, res) for w, res in rows), ""]
    lines += [f"Machine: {machine()}. Run {stamp}.", "", method]
    tape_rows = [r for r in (tape_row(w, res) for w, res in rows) if r]
    if tape_rows:
        lines += ["", "## Tape", "", TAPE_HEADER, *tape_rows, "", TAPE_NOTES]
    lines += ["", "## Goals", "", *goals(rows)]
    failures = [f"- {w.name}: {msg}" for w, res in rows for msg in res["errors"]]
    if failures:
        lines += ["", "Failures:", *failures]
    for section in extra:
        lines += ["", *section]
    return "\n".join(lines) + "\n"


def measure(workload, repeats):
    """Everything about one workload; a failure is recorded and the run goes on."""
    res = {"errors": [], "wrong": False}
    print(f"[{workload.name}] steady state ...", file=sys.stderr, flush=True)
    try:
        res["steady"] = steady_state(workload)
    except Exception as exc:  # one unsupported workload must not hide the others
        res["errors"].append(f"gradient: {type(exc).__name__}: {exc}".splitlines()[0])
        res["wrong"] = True
    else:
        err = res["steady"]["fd_error"]
        if not err < FD_TOLERANCE:
            res["errors"].append(f"FD rel. error {err:.1e} exceeds {FD_TOLERANCE:g}")
            res["wrong"] = True
    if workload.overwritten and res.get("steady"):
        print(f"[{workload.name}] tape ...", file=sys.stderr, flush=True)
        try:
            res["tape"] = tape_accounting(workload, res["steady"]["args"], res["steady"]["grad"])
        except Exception as exc:
            res["errors"].append(f"tape: {type(exc).__name__}: {exc}".splitlines()[0])
    print(f"[{workload.name}] first-call latency ...", file=sys.stderr, flush=True)
    try:
        res["first"] = first_call(workload.name, repeats)
    except Exception as exc:
        res["errors"].append(f"first call: {exc}".splitlines()[0])
    return res


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="workloads to run (default: all)")
    parser.add_argument("--repeats", type=int, default=3, help="first-call samples (default 3)")
    parser.add_argument("--first-call", metavar="NAME", help=argparse.SUPPRESS)  # child process
    opts = parser.parse_args(argv)
    if opts.first_call:
        first_call_child(opts.first_call)
        return 0
    chosen = [w for w in WORKLOADS if not opts.names or w.name in opts.names]
    rows = [(w, measure(w, opts.repeats)) for w in chosen]
    gradbench_wrong, extra = False, []
    if not opts.names:  # a subset prints its own rows only (the peers' section writes results/ too)
        gradbench, gradbench_wrong = gradbench_section()
        extra = [
            startup_section(),
            module_section("parallel_adjoint", "parallel_report", "prange adjoint report"),
            module_section("alias_checks", "alias_report", "Overlap-check report"),
            module_section("vectorized", "vectorized_report", "Vectorized report"),
            module_section("second_order", "second_order_report", "Second-order report"),
            module_section("sparse", "sparse_report", "Sparse report"),
            module_section("checkpointing", "checkpointing_report", "Checkpointing report"),
            peer_section(),
            gradbench,
            module_section("gradbench_evals", "gradbench_evals_report", "GradBench evals"),
            module_section("npbench.bench", "npbench_report", "NPBench"),
            module_section("nested", "nested_report", "Nested derivatives report"),
        ]
    text = report(rows, opts.repeats, extra)
    print(text)
    if not opts.names:  # only a full run replaces the recorded results
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(text)
        print(f"written to {RESULTS.relative_to(ROOT)}", file=sys.stderr)
    return 1 if gradbench_wrong or any(res["wrong"] for _, res in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
