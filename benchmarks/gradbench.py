"""GradBench-style set: sourcead against the numba primal, hand-written adjoints and JAX.

    python -m benchmarks.gradbench                 # all ten workloads, prints the section
    python -m benchmarks.gradbench lu_logdet ode   # a subset
    python -m benchmarks.gradbench --repeats 9 --first-repeats 3

``python -m benchmarks.run`` (``make bench``) adds this section to ``results/latest.md``. For every
workload of ``benchmarks.gradbench_workloads``, in one run:
  * checks: sourcead's gradient against central finite differences of the primal along a seeded
    random direction; each hand-written adjoint (``benchmarks.gradbench_adjoints``) against
    sourcead's gradient and the same finite differences; JAX's gradient against sourcead's;
  * steady state: the numba primal (``parallel=True`` when the function uses ``prange``), sourcead's
    gradient and the hand-written adjoint, timed in interleaved rounds (one batch of each per round,
    so that load from other jobs hits all of them alike), medians over the rounds;
  * JAX ``jit(grad)`` of the vectorised version (``benchmarks.gradbench_jax``), in a process of its
    own, where JAX is installed;
  * for ``prange`` workloads: primal and gradient with 1 and with 2 numba threads;
  * first call, each sample in a new process with new, empty cache folders (cold) and a second
    process on the same folders (warm): sourcead (``grad`` to the end of its first call) against
    numba (``njit(cache=True)`` of the primal to the end of its first call).
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
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
from benchmarks.gradbench_adjoints import HAND
from benchmarks.gradbench_workloads import GB_BY_NAME, GB_WORKLOADS

ROOT = Path(__file__).resolve().parents[1]
FD_STEP = 1e-5
FD_TOLERANCE = 1e-5  # |FD - <grad, d>| / |grad|
AGREE = 1e-8  # hand-written and JAX gradients against sourcead's: max |diff| / max |sourcead|
BATCH_SECONDS = 0.02


def uses_prange(func) -> bool:
    return "prange(" in inspect.getsource(func)


def positions(workload) -> list[int]:
    params = list(inspect.signature(workload.func).parameters)
    return [params.index(name) for name in workload.wrt]


def fd_error(primal, args, where, grads, seed=0) -> float:
    """|FD - <grad, d>| / |grad|, central differences along one seeded random unit direction d."""
    rng = np.random.default_rng(seed)
    direction = [rng.standard_normal(np.shape(args[p])) for p in where]
    norm = math.sqrt(sum(float(np.sum(d * d)) for d in direction))
    direction = [d / norm for d in direction]

    def shifted(h):
        moved = list(args)
        for p, d in zip(where, direction, strict=True):
            moved[p] = args[p] + h * (d if np.ndim(d) else float(d))
        return primal(*moved)

    fd = (shifted(FD_STEP) - shifted(-FD_STEP)) / (2.0 * FD_STEP)
    ad = sum(float(np.sum(np.asarray(g) * d)) for g, d in zip(grads, direction, strict=True))
    grad_norm = math.sqrt(sum(float(np.sum(np.square(g))) for g in grads))
    return abs(fd - ad) / max(grad_norm, abs(fd), 1e-300)


def disagreement(grads, reference) -> float:
    """max |g - r| / max |r| over all differentiated arguments."""
    diff = max(float(np.max(np.abs(np.asarray(g) - r))) for g, r in zip(grads, reference, strict=True))
    return diff / max(max(float(np.max(np.abs(r))) for r in reference), 1e-300)


def interleaved(fns: dict, rounds: int) -> dict:
    """Median seconds per call of each function; every round times one batch of each in turn."""
    numbers = {}
    for name, fn in fns.items():
        fn()  # warm-up: compilation stays out of the figure
        start = time.perf_counter()
        fn()
        numbers[name] = max(1, int(BATCH_SECONDS / max(time.perf_counter() - start, 1e-7)))
    samples = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            start = time.perf_counter()
            for _ in range(numbers[name]):
                fn()
            samples[name].append((time.perf_counter() - start) / numbers[name])
    return {name: statistics.median(times) for name, times in samples.items()}


def steady(workload, rounds: int) -> dict:
    """Checks, then primal / gradient / hand-written times; 1 and 2 threads for prange workloads."""
    args = workload.make_args()
    where = positions(workload)
    primal = numba.njit(workload.func, parallel=uses_prange(workload.func))
    grad = sourcead.grad(workload.func, wrt=workload.wrt)
    reference = grad(*args)
    res = {"reference": reference, "fd_error": fd_error(primal, args, where, reference), "errors": []}
    fns = {"primal": lambda: primal(*args), "grad": lambda: grad(*args)}
    hand = HAND.get(workload.name)
    if hand is not None:
        got = hand(*args)
        res["hand_agree"] = disagreement(got, reference)
        res["hand_fd_error"] = fd_error(primal, args, where, got)
        if res["hand_agree"] <= AGREE and res["hand_fd_error"] < FD_TOLERANCE:
            fns["hand"] = lambda: hand(*args)
        else:  # a wrong adjoint is not timed
            res["errors"].append(f"hand-written adjoint disagrees ({res['hand_agree']:.1e} vs sourcead)")
    res["times"] = interleaved(fns, rounds)
    if uses_prange(workload.func):
        default = numba.get_num_threads()
        try:
            numba.set_num_threads(1)
            one = interleaved(fns, rounds)
            numba.set_num_threads(min(2, default))
            two = interleaved(fns, rounds)
        finally:
            numba.set_num_threads(default)
        res["threads"] = {name: one[name] / two[name] for name in fns}
    return res


# --- JAX, in a process of its own -------------------------------------------------------------------


def jax_child(names: list[str], refs_path: str, rounds: int) -> None:
    """Check, then time, ``jit(grad)`` of each vectorised workload; prints one JSON line."""
    import jax

    from benchmarks.gradbench_jax import VECTORISED

    refs = np.load(refs_path)
    out = {"version": jax.__version__, "results": {}}
    for name in names:
        if name not in VECTORISED:
            continue
        workload = GB_BY_NAME[name]
        args = workload.make_args()
        static = tuple(k for k, a in enumerate(args) if isinstance(a, int))
        fn = jax.jit(jax.grad(VECTORISED[name], argnums=tuple(positions(workload))), static_argnums=static)
        dev = [a if k in static else jax.numpy.asarray(a) for k, a in enumerate(args)]

        def call(fn=fn, dev=dev):
            return [np.asarray(g) for g in jax.block_until_ready(fn(*dev))]

        print(f"[{name}] JAX ...", file=sys.stderr, flush=True)
        try:
            err = disagreement(call(), [refs[f"{name}/{k}"] for k in range(len(workload.wrt))])
            if not err <= AGREE:
                out["results"][name] = {"error": f"JAX gradient differs from sourcead's by {err:.1e}"}
                continue
            out["results"][name] = {"time": interleaved({"jax": call}, rounds)["jax"], "agree": err}
        except Exception as exc:  # one failing peer is reported, never fatal
            out["results"][name] = {"error": f"JAX: {type(exc).__name__}: {exc}".splitlines()[0]}
    print(json.dumps(out))


def run_jax(records: list[dict], rounds: int) -> str:
    """Fills ``rec["jax"]`` from the JAX child; returns a note (version, or why it was skipped)."""
    if importlib.util.find_spec("jax") is None:
        return "JAX skipped: not installed (`pip install -e '.[bench]'` adds it)."
    names = [r["name"] for r in records if "reference" in r]
    with tempfile.TemporaryDirectory(prefix="sourcead-gb-") as tmp:
        refs = {
            f"{r['name']}/{k}": np.asarray(g) for r in records if "reference" in r for k, g in enumerate(r["reference"])
        }
        path = str(Path(tmp) / "refs.npz")
        np.savez(path, **refs)
        cmd = [sys.executable, "-m", "benchmarks.gradbench", "--jax-child", path, "--repeats", str(rounds), *names]
        proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True, check=False)
    if proc.returncode != 0:
        return f"JAX child failed (exit code {proc.returncode})."
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    for rec in records:
        got = out["results"].get(rec["name"])
        if got and "error" in got:
            rec["errors"].append(got["error"])
        elif got:
            rec["jax"] = got["time"]
    return f"JAX {out['version']}."


# --- first calls, each in a new process -------------------------------------------------------------


def first_call_child(name: str, tool: str) -> None:
    """Seconds from preparing (sourcead.grad / numba.njit) to the end of the first call."""
    workload = GB_BY_NAME[name]
    args = workload.make_args()
    start = time.perf_counter()
    if tool == "sourcead":
        sourcead.grad(workload.func, wrt=workload.wrt)(*args)
    else:
        numba.njit(workload.func, cache=True, nogil=True, parallel=uses_prange(workload.func))(*args)
    print(json.dumps({"seconds": time.perf_counter() - start}))


def _child(name: str, tool: str, cache: Path) -> float:
    env = dict(os.environ, SOURCEAD_CACHE_DIR=str(cache / "sourcead"), NUMBA_CACHE_DIR=str(cache / "numba"))
    cmd = [sys.executable, "-m", "benchmarks.gradbench", "--first-call", name, tool]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError((proc.stderr.strip().splitlines() or ["child failed"])[-1])
    return json.loads(proc.stdout.strip().splitlines()[-1])["seconds"]


def first_calls(name: str, repeats: int) -> dict:
    """Medians of cold and warm first calls of sourcead's gradient and of numba's primal."""
    samples = {key: [] for key in ("sourcead_cold", "sourcead_warm", "numba_cold", "numba_warm")}
    for _ in range(repeats):
        for tool in ("sourcead", "numba"):
            with tempfile.TemporaryDirectory(prefix="sourcead-gb-") as tmp:
                samples[f"{tool}_cold"].append(_child(name, tool, Path(tmp)))
                samples[f"{tool}_warm"].append(_child(name, tool, Path(tmp)))
    return {key: statistics.median(v) for key, v in samples.items()}


# --- the report -------------------------------------------------------------------------------------


def measure(workloads, rounds: int, first_repeats: int) -> tuple[list[dict], list[str]]:
    records = []
    for w in workloads:
        rec = {"name": w.name, "size": w.size, "wrt": w.wrt, "errors": []}
        print(f"[{w.name}] steady state ...", file=sys.stderr, flush=True)
        try:
            res = steady(w, rounds)
            rec["errors"] += res.pop("errors")
            rec.update(res)
            if not rec["fd_error"] < FD_TOLERANCE:
                rec["errors"].append(f"sourcead: FD rel. error {rec['fd_error']:.1e}")
                rec["wrong"] = True
        except Exception as exc:  # one failing workload must not hide the others
            rec["errors"].append(f"sourcead: {type(exc).__name__}: {exc}".splitlines()[0])
            rec["wrong"] = True
        if first_repeats > 0:
            print(f"[{w.name}] first calls ...", file=sys.stderr, flush=True)
            try:
                rec["first"] = first_calls(w.name, first_repeats)
            except Exception as exc:
                rec["errors"].append(f"first call: {exc}")
        records.append(rec)
    notes = [run_jax(records, rounds)]
    return records, notes


def fmt_time(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def _ratio(rec, key) -> float | None:
    times = rec.get("times", {})
    if key == "jax":
        return rec["jax"] / times["primal"] if "jax" in rec and times else None
    return times[key] / times["primal"] if key in times else None


def _cell(value, digits=2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


HEADER = (
    "| workload | size | wrt | numba primal | sourcead / primal | hand / primal | JAX / primal | FD rel. error "
    "| 2 threads vs 1: primal, sourcead | first call cold: sourcead, numba | warm: sourcead, numba |\n"
    "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|"
)


def row(rec) -> str:
    cells = [rec["name"], rec["size"], ", ".join(rec["wrt"])]
    if "times" not in rec:
        return "| " + " | ".join(cells + ["failed"] * 8) + " |"
    cells += [fmt_time(rec["times"]["primal"])]
    cells += [_cell(_ratio(rec, k)) for k in ("grad", "hand", "jax")]
    cells += [f"{rec['fd_error']:.0e}"]
    t = rec.get("threads")
    cells += [f"{t['primal']:.2f}x, {t['grad']:.2f}x" if t else "-"]
    f = rec.get("first")
    if f:
        cells += [f"{fmt_time(f['sourcead_cold'])}, {fmt_time(f['numba_cold'])}"]
        cells += [f"{fmt_time(f['sourcead_warm'])}, {fmt_time(f['numba_warm'])}"]
    else:
        cells += ["-", "-"]
    return "| " + " | ".join(cells) + " |"


def geomean(values) -> float:
    return math.exp(statistics.fmean(math.log(v) for v in values))


def goals(records) -> list[str]:
    """The goals of issue 13, each with the measured figures."""
    ok = [r for r in records if "times" in r]
    if not ok:
        return ["- no workload measured."]
    ratios = {r["name"]: _ratio(r, "grad") for r in ok}
    over = ", ".join(f"{n} {v:.1f}" for n, v in ratios.items() if v > 3.0) or "none"
    lines = [
        f"- sourcead gradient / primal <= 3 on every workload: {'met' if over == 'none' else 'missed'} "
        f"(above 3: {over}); geomean {geomean(ratios.values()):.2f} (goal 2.0).",
    ]
    hand = [(r["name"], r["times"]["grad"] / r["times"]["hand"]) for r in ok if "hand" in r["times"]]
    if hand:
        text = ", ".join(f"{n} {v:.2f}x" for n, v in hand)
        verdict = "met" if all(v <= 1.25 for _, v in hand) else "missed"
        lines.append(f"- within 1.25x of the hand-written adjoint: {verdict} (sourcead / hand: {text}).")
    jax = [(r["name"], r["jax"] / r["times"]["grad"]) for r in ok if "jax" in r]
    if jax:
        text = ", ".join(f"{n} {v:.2f}x" for n, v in jax)
        verdict = "met" if all(v >= 1.0 for _, v in jax) else "missed"
        lines.append(f"- faster than JAX jit(grad): {verdict} (JAX / sourcead: {text}).")
    par = [(r["name"], r["threads"]["grad"]) for r in ok if "threads" in r]
    if par:
        text = ", ".join(f"{n} {v:.2f}x" for n, v in par)
        verdict = "met" if all(v >= 1.85 for _, v in par) else "missed"
        lines.append(f"- prange adjoint speedup from 1 to 2 threads >= 1.85: {verdict} ({text}).")
    first = [(r["name"], r["first"]) for r in ok if "first" in r]
    if first:
        cold = ", ".join(f"{n} {f['sourcead_cold'] / f['numba_cold']:.1f}x" for n, f in first)
        warm = ", ".join(f"{n} {f['sourcead_warm'] / f['numba_warm']:.2f}x" for n, f in first)
        cold_ok = all(f["sourcead_cold"] <= 2.0 * f["numba_cold"] for _, f in first)
        warm_ok = all(f["sourcead_warm"] <= 1.5 * f["numba_warm"] for _, f in first)
        lines.append(f"- cold first call <= 2x numba's cold compile: {'met' if cold_ok else 'missed'} ({cold}).")
        lines.append(f"- warm first call <= 1.5x numba's warm load: {'met' if warm_ok else 'missed'} ({warm}).")
    return lines


def notes_text(rounds: int, first_repeats: int) -> str:
    return (
        f"Steady state: medians over {rounds} interleaved rounds (one ~{BATCH_SECONDS * 1e3:.0f} ms batch of each "
        "tool per round, after a warm-up call), in one process; JAX `jit(grad)` of the vectorised version "
        "in a process of its own, same method. Ratios are each tool's gradient time over the numba primal's. "
        f"Every hand-written and JAX gradient agrees with sourcead's to {AGREE:g} (max abs difference / max abs "
        "value) before it is timed; FD rel. error: |FD - <grad, d>| / |grad|, central differences of the "
        f"primal (h = {FD_STEP:g}) along a seeded random unit direction. 2 threads vs 1: time with "
        "`numba.set_num_threads(1)` over time with 2, primal and sourcead gradient (prange workloads). "
        f"First call: median of {first_repeats} new processes, imports excluded; cold: new, empty "
        "SOURCEAD_CACHE_DIR and NUMBA_CACHE_DIR; warm: a second process on the same folders; numba: "
        "`numba.njit(f, cache=True)` of the primal to the end of its first call. Load average (1, 5, 15 min) "
        "at the end: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + f" on {os.cpu_count()} CPUs "
        "(other jobs on the machine slow the 2-thread runs most)."
    )


def section(records, notes, rounds: int, first_repeats: int) -> list[str]:
    lines = ["## GradBench-style set (`benchmarks/gradbench.py`)", "", HEADER, *(row(r) for r in records), ""]
    lines += [notes_text(rounds, first_repeats), "", "### Goals (issue 13)", "", *goals(records)]
    errors = [f"- {r['name']}: {e}" for r in records for e in r["errors"]]
    lines += ["", *errors, *(f"- {n}" for n in notes if n)]
    return lines


def run(names=(), rounds: int = 7, first_repeats: int = 1) -> tuple[list[str], bool]:
    """The markdown section and whether any gradient was wrong (or could not be computed)."""
    workloads = [w for w in GB_WORKLOADS if not names or w.name in names]
    records, notes = measure(workloads, rounds, first_repeats)
    return section(records, notes, rounds, first_repeats), any(r.get("wrong") for r in records)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="workloads (default: all)")
    parser.add_argument("--repeats", type=int, default=7, help="interleaved timing rounds (default 7)")
    parser.add_argument("--first-repeats", type=int, default=1, help="first-call samples (default 1; 0 skips)")
    parser.add_argument("--first-call", nargs=2, metavar=("NAME", "TOOL"), help=argparse.SUPPRESS)
    parser.add_argument("--jax-child", metavar="REFS", help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    if opts.first_call:
        first_call_child(*opts.first_call)
        return 0
    if opts.jax_child:
        jax_child(opts.names, opts.jax_child, opts.repeats)
        return 0
    lines, wrong = run(opts.names, opts.repeats, opts.first_repeats)
    print("\n".join(lines))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
