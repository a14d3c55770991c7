"""Checkpointed time loops in bounded memory (issue 15): ``python -m benchmarks.checkpointing``.

For each workload and memory budget, in a fresh process per row (so peak memory is that call's):
  * peak memory: growth of the process's peak resident set during the gradient call (the call
    alone: compiled and warmed up before on a short run), against the budget. Linux: the peak
    (VmHWM) is reset just before the call by writing 5 to /proc/self/clear_refs, and read after;
    without that, the peak compiling left behind hid the call's (every row read 0 MB); elsewhere
    the growth of ru_maxrss, a lower bound;
  * gradient / primal: medians of repeated gradient and primal (numba.njit) calls;
  * replays: the steps the reverse sweep runs again (schedule advances), against revolve's
    optimum for the same number of snapshots (the forward sweep's first pass counted, as
    revolve counts it);
  * the gradient against the unbounded adjoint's, where that one fits in memory.

Workloads: `heat_swap` (benchmarks.workloads: 400 points, buffers exchanged every step) over
100,000 steps, `heat_while` (the same as a `while` loop: online checkpointing, its step count
unknown until it ends; replays against offline revolve's for the same snapshots), and
`gray_scott` (benchmarks.gradbench_workloads: 2-D reaction-diffusion with periodic indices and
buffer swaps) on 512 x 512 over 2,000 steps, whose unbounded tape (about
4 GB) is not run.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import statistics
import subprocess
import sys
import time
from math import comb

import numpy as np

MB = 10**6
CASES = {
    # 2 MB holds about sqrt(steps) snapshots of heat_swap's state (6.4 kB)
    "heat_swap": {"budgets": [2 * MB, 16 * MB, 64 * MB, 256 * MB, None], "steps": 100_000},
    "heat_while": {"budgets": [2 * MB, 16 * MB, 64 * MB, None], "steps": 100_000},
    "gray_scott": {"budgets": [64 * MB, 256 * MB], "steps": 2_000},
}


def _workload(name: str, steps: int):
    if name in ("heat_swap", "heat_while"):
        from benchmarks import workloads

        x = np.linspace(0.0, 1.0, 400)
        return getattr(workloads, name), (np.sin(np.pi * x) + 0.1 * np.sin(7 * np.pi * x), 0.2, steps), (0, 1)
    from benchmarks.gradbench_workloads import _gray_scott_args, gray_scott

    return gray_scott, _gray_scott_args(512, steps), (0, 1, 2, 3)


def revolve_optimum(steps: int, snapshots: int) -> int:
    if steps <= 1:
        return 0
    r = 0
    while comb(snapshots + r, snapshots) < steps:
        r += 1
    return r * steps - comb(snapshots + r, r - 1)


def schedule_advances(steps: int, slots: int) -> tuple[int, int]:
    """(steps replayed by the reverse sweep, steps of the forward pass before its last snapshot)."""
    from sourcead.runtime.checkpoint import CHECKPOINT_ADVANCE, checkpoint_next, checkpoint_schedule

    stores, plan = checkpoint_schedule(steps, slots)
    advances = 0
    while True:
        plan, action, a, b, _ = checkpoint_next(plan, slots)
        if action < 0:
            return advances, int(stores[:, 0].max())
        if action == CHECKPOINT_ADVANCE:
            advances += b - a


def online_advances(steps: int, state_bytes: int, budget: int) -> tuple[int, int]:
    """(snapshots, steps replayed by the reverse sweep) of the online schedule of a while loop."""
    from sourcead.runtime.checkpoint import (
        CHECKPOINT_ADVANCE,
        checkpoint_next,
        checkpoint_online,
        checkpoint_online_plan,
        checkpoint_place,
    )

    table = checkpoint_online(state_bytes, budget)
    for step in range(steps):
        table, _ = checkpoint_place(table, step)
    slots, plan = checkpoint_online_plan(table, steps)
    advances = 0
    while True:
        plan, action, a, b, _ = checkpoint_next(plan, slots)
        if action < 0:
            return int(slots), int(advances)
        if action == CHECKPOINT_ADVANCE:
            advances += b - a


def _reset_peak() -> int:
    """The resident set now, in bytes, after resetting the peak where Linux allows it (else the
    peak so far: the growth measured from it is then a lower bound)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return _status_bytes("VmRSS")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _peak() -> int:
    try:
        return _status_bytes("VmHWM")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _status_bytes(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise OSError(f"no {field} in /proc/self/status")


def _snapshot_parts(source: str) -> tuple[int, int]:
    """(arrays, scalars) a snapshot of the generated module's checkpointed loop holds."""
    arrays = len(re.findall(r"_snaps = np\.empty\(\(", source))
    scalars = len(re.findall(r"_snaps = np\.empty\((?!\()", source))
    return arrays, scalars


def measure(name: str, budget: int | None, steps: int, repeats: int) -> dict:
    """One row, in this process: run by `main` in a subprocess per row."""
    import numba

    import sourcead

    func, args, wrt = _workload(name, steps)
    short = args[:-1] + (3,)
    grad = sourcead.grad(func, wrt=wrt, memory=budget)
    grad(*short)  # compiled and warmed up
    primal = numba.njit(func)
    primal(*short)
    before = _reset_peak()
    start = time.perf_counter()
    g = grad(*args)
    first = time.perf_counter() - start
    peak = _peak() - before
    grads = [first]
    for _ in range(repeats - 1):
        start = time.perf_counter()
        grad(*args)
        grads.append(time.perf_counter() - start)
    primals = []
    for _ in range(max(repeats, 3)):
        start = time.perf_counter()
        primal(*args)
        primals.append(time.perf_counter() - start)
    row = {"name": name, "budget": budget, "steps": steps, "peak": peak,
           "grad": statistics.median(grads), "primal": statistics.median(primals),
           "g": [np.asarray(x).ravel()[:64].tolist() for x in g]}  # fmt: skip
    if budget is not None:
        arrays, scalars = _snapshot_parts(grad.source)  # the state arrays have the first argument's size
        state = arrays * args[0].nbytes + 8 * scalars
        row.update(state=state)
    if budget is not None and name == "heat_while":
        slots, advances = online_advances(steps, state, budget)
        revolve, forward = schedule_advances(steps, slots)
        row.update(slots=slots, replays=advances, optimum=int(revolve))  # revolve knowing the count
    elif budget is not None:
        slots = min(steps, budget // state)
        advances, forward = schedule_advances(steps, slots)
        row.update(slots=int(slots), replays=int(advances), optimum=int(revolve_optimum(steps, slots) - forward))
    return row


def checkpointing_report(names=None, repeats: int = 3) -> str:
    """The markdown table, every row measured in a process of its own."""
    lines = ["## Checkpointed time loops (issue 15)", "",
             "| workload | steps | budget | snapshots | peak memory | within budget | grad / primal | replays | "
             "revolve's optimum | max rel. diff vs unbounded |",
             "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for name in names or list(CASES):
        case = CASES[name]
        rows = []
        for budget in case["budgets"]:
            row_arg = json.dumps([name, budget, case["steps"]])
            done = subprocess.run(
                [sys.executable, "-m", "benchmarks.checkpointing", "--row", row_arg, "--repeats", str(repeats)],
                capture_output=True, text=True,
            )  # fmt: skip
            if done.returncode != 0:
                why = (done.stderr.strip().splitlines() or ["no output"])[-1]
                lines.append(f"| {name} | {case['steps']} | {budget} | failed: {why} |")
                continue
            rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
        exact = next((r for r in rows if r["budget"] is None), None)
        for r in rows:
            diff = ""
            if exact is not None and r is not exact:
                diff = max(
                    float(np.max(np.abs(np.subtract(a, b)) / np.maximum(np.abs(b), 1e-300)))
                    for a, b in zip(r["g"], exact["g"], strict=True)
                )
                diff = f"{diff:.1e}"
            budget = "unbounded" if r["budget"] is None else f"{r['budget'] / MB:g} MB"
            within = "" if r["budget"] is None else ("yes" if r["peak"] <= r["budget"] + 16 * MB else "NO")
            cells = [name, r["steps"], budget, r.get("slots", ""), f"{r['peak'] / MB:.0f} MB", within,
                     f"{r['grad'] / r['primal']:.1f}", r.get("replays", ""), r.get("optimum", ""), diff]  # fmt: skip
            lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    lines += [
        "",
        "peak memory: growth of the peak resident set during the first gradient call at full size;",
        "'within budget': at most the budget plus 16 MB (one step's records, the call's own arrays).",
        "replays: steps the reverse sweep runs again; optimum: revolve's fewest for those snapshots",
        "(heat_while: online, against offline revolve's reverse sweep, which knows the step count).",
    ]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=list(CASES))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--row", help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    if opts.row:
        name, budget, steps = json.loads(opts.row)
        print(json.dumps(measure(name, budget, steps, opts.repeats)))
        return 0
    text = checkpointing_report(opts.names, opts.repeats)
    print(text)
    return 1 if "| NO |" in text or "failed:" in text else 0


if __name__ == "__main__":
    sys.exit(main())
