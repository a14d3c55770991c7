"""Where a GradBench-style gradient spends its time: ``python -m benchmarks.gradbench_anatomy [names]``.

For each workload of ``benchmarks.gradbench_workloads`` it reads the generated reverse module
(``sourcead.pipeline.driver.generate(f, "reverse", wrt).source``) and runs its forward sweep alone (the
module cut at ``# reverse sweep``, as ``benchmarks.tape`` does), and prints one markdown row:
  * lines of the generated module, and counts of patterns in its text that cost time:
    tape capacity checks (``if top == tape.shape[0]``), float and int records, cancelling
    self-updates (``t = x_bar[..]; x_bar[..] = 0.0; x_bar[..] += t``), repeated contributions (the
    same accumulation twice in a row, ``d_bar += d * total_bar`` for ``total += d * d``);
  * tape use of one call: float64 and int64 records at the end of the forward sweep;
  * time: numba primal, forward sweep, whole gradient; the reverse sweep is the difference.
The figures feed the "Where the time goes" section of ``benchmarks/README.md``.
"""

from __future__ import annotations

import re
import sys

import numba

import sourcead
from benchmarks.gradbench import interleaved, uses_prange
from benchmarks.gradbench_workloads import GB_WORKLOADS
from benchmarks.tape import REVERSE_MARK
from sourcead.pipeline.driver import generate

POSITION = r"np\.uint64\(\w+\)"  # a record's tape position (sourcead.recording.position)
REPEATED = re.compile(r"^(\s*\w+(?:\[[^\]]*\])? [+-]= .*)\n\1$", re.M)
SELF_UPDATE = re.compile(r"^\s*(t\d+) = (\w+_bar\[[^\]]*\])\n\s*\2 = 0\.0\n\s*\2 \+= \1$", re.M)


def patterns(source: str) -> dict:
    """Counts, in the text of a generated module, of the constructs that cost time."""
    return {
        "lines": source.count("\n"),
        "checks": source.count("== tape.shape[0]") + source.count("== itape.shape[0]"),
        "records": len(re.findall(rf"^\s*l?tape\[{POSITION}\] = ", source, re.M)),
        "irecords": len(re.findall(rf"^\s*l?itape\[{POSITION}\] = ", source, re.M)),
        "self_updates": len(SELF_UPDATE.findall(source)),
        "repeated": len(REPEATED.findall(source)),
    }


def forward_sweep(func, wrt):
    """The forward sweep alone, compiled as the gradient is (parallel where it uses prange)."""
    gen = generate(func, "reverse", wrt)
    lines = gen.source.splitlines()
    # the counters are `top` and `itop`, or fresh names when the user's code has those names
    top, itop = (re.search(rf"^\s*{tape}\[np\.uint64\((\w+)\)\] = ", gen.source, re.M) for tape in ("tape", "itape"))
    top, itop = (found.group(1) if found else "0" for found in (top, itop))
    lines[lines.index(REVERSE_MARK)] = f"    return {top}, {itop}, value"
    namespace: dict = {}
    exec(compile("\n".join(lines) + "\n", f"<forward sweep of {gen.entry}>", "exec"), namespace)
    return gen.source, numba.njit(namespace[gen.entry], parallel=uses_prange(func), error_model="numpy")


def anatomy(workload, rounds=7) -> dict:
    args = workload.make_args()
    source, sweep = forward_sweep(workload.func, workload.wrt)
    top, itop, _ = sweep(*args, 1.0)
    primal = numba.njit(workload.func, parallel=uses_prange(workload.func))
    grad = sourcead.grad(workload.func, wrt=workload.wrt)
    times = interleaved(
        {"primal": lambda: primal(*args), "forward": lambda: sweep(*args, 1.0), "grad": lambda: grad(*args)}, rounds
    )
    return {"name": workload.name, "top": int(top), "itop": int(itop), **patterns(source), **times}


def table(rows) -> str:
    lines = [
        "| workload | lines | capacity checks | records (float, int) | cancelling self-updates "
        "| repeated contributions "
        "| tape of one call (float, int) | primal | forward sweep | gradient | forward / primal | reverse / primal |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in rows:
        reverse = r["grad"] - r["forward"]
        lines.append(
            f"| {r['name']} | {r['lines']} | {r['checks']} | {r['records']}, {r['irecords']} "
            f"| {r['self_updates']} | {r['repeated']} "
            f"| {r['top']}, {r['itop']} | {r['primal'] * 1e3:.3g} ms | {r['forward'] * 1e3:.3g} ms "
            f"| {r['grad'] * 1e3:.3g} ms | {r['forward'] / r['primal']:.2f} | {reverse / r['primal']:.2f} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    names = sys.argv[1:] if argv is None else argv
    rows = []
    for w in GB_WORKLOADS:
        if not names or w.name in names:
            print(f"[{w.name}] ...", file=sys.stderr, flush=True)
            rows.append(anatomy(w))
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
