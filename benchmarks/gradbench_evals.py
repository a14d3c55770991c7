"""The "GradBench evals" section of ``make bench``: each eval of ``benchmarks.gradbench_tool``
timed as the tool times it, and its derivative/primal ratio beside JAX's and PyTorch's.

Inputs are GradBench's formats at GradBench's default sizes (``SIZES``), made here with a seeded
rng (GradBench's own inputs and data files are not needed). sourcead's figures come from the tool's own ``Session``:
``define`` compiles, then ``evaluate`` runs each function at least ``MIN_RUNS`` times and for
``MIN_SECONDS``, one timing per run, and the table shows the median. The peers
(``gradbench_tool_peers``) are timed the same way on the same decoded inputs in the same run, each
peer in a process of its own, every run waiting for its result; a peer missing, unwritten or failing
is a note in the table.
"""

from __future__ import annotations

import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.gradbench_tool import EVALS
from benchmarks.gradbench_tool.ht import tiny_input as ht_tiny_input
from benchmarks.gradbench_tool.protocol import Session

ROOT = Path(__file__).resolve().parent.parent
MIN_RUNS = 5
MIN_SECONDS = 0.2
AGREEMENT = 1e-6  # the peer's derivative against ours: max |peer - ours| / max |ours|

# eval -> (primal function, derivative function) as GradBench names them
FUNCTIONS = {
    "hello": ("square", "double"),
    "llsq": ("primal", "gradient"),
    "lse": ("primal", "gradient"),
    "det": ("primal", "gradient"),
    "ode": ("primal", "gradient"),
    "gmm": ("objective", "jacobian"),
    "kmeans": ("cost", "dir"),
    "lstm": ("objective", "jacobian"),
    "ht": ("objective", "jacobian"),
    "ba": ("objective", "jacobian"),
}

# GradBench's default sizes (each eval's run.py): the largest of each default list, except det
# (ell 5-11: 10 here, as ell = 11's gradient records about 1.5 GB) and ba (ba1-ba14: ba1's n, m, p
# here; the larger ones encode Jacobians of tens of millions of entries as JSON lists)
SIZES = {
    "hello": {},
    "llsq": {"m": 128, "n": 16392},
    "lse": {"n": 1_280_000},
    "det": {"ell": 10},
    "ode": {"n": 100_000, "s": 100},
    "gmm": {"d": 64, "k": 100, "n": 1000},
    "kmeans": {"n": 10_000, "k": 1000, "d": 16},
    "lstm": {"layers": 6, "b": 14, "c": 8192},
    "ht": {"vertices": 544, "points": 100_000},
    "ba": {"n": 49, "m": 7776, "p": 31843},
}

# ba's camera: rotation, centre, focal length, principal point, two distortion coefficients
CAM_SPREAD = np.array([0.3, 0.3, 0.3, 1.0, 1.0, 1.0, 10.0, 1.0, 1.0, 0.01, 0.001])
CAM_CENTRE = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 400.0, 0.0, 0.0, 0.0, 0.0])

TINY_SIZES = {
    "hello": {},
    "llsq": {"m": 3, "n": 7},
    "lse": {"n": 6},
    "det": {"ell": 4},
    "ode": {"n": 4, "s": 3},
    "gmm": {"d": 2, "k": 2, "n": 3},
    "kmeans": {"n": 6, "k": 2, "d": 2},
    "lstm": {"layers": 1, "b": 3, "c": 4},
    "ht": {"vertices": 6, "points": 3},
    "ba": {"n": 2, "m": 3, "p": 16},
}


def make_input(name: str, size: dict, seed: int = 0):
    """A GradBench input of eval ``name`` at ``size``, from a seeded rng (lists, as JSON gives)."""
    rng = np.random.default_rng(seed)
    if name == "hello":
        return 1.5
    if name == "llsq":
        return {"x": rng.standard_normal(size["m"]).tolist(), "n": size["n"]}
    if name == "lse":
        return {"x": rng.standard_normal(size["n"]).tolist()}
    if name == "det":
        return {"A": rng.standard_normal(size["ell"] ** 2).tolist(), "ell": size["ell"]}
    if name == "ode":
        return {"x": rng.random(size["n"]).tolist(), "s": size["s"]}
    if name == "gmm":
        d, k, n = size["d"], size["k"], size["n"]
        return {
            "d": d,
            "k": k,
            "n": n,
            "x": rng.standard_normal((n, d)).tolist(),
            "m": 0,
            "gamma": 1.0,
            "alpha": rng.standard_normal(k).tolist(),
            "mu": rng.standard_normal((k, d)).tolist(),
            "q": (0.1 * rng.standard_normal((k, d))).tolist(),
            "l": (0.1 * rng.standard_normal((k, d * (d - 1) // 2))).tolist(),
        }
    if name == "kmeans":
        n, k, d = size["n"], size["k"], size["d"]
        points = rng.random((n, d))
        # as GradBench's eval: the last k points, so that no cluster is empty (H's diagonal > 0)
        return {"points": points.tolist(), "centroids": points[-k:].tolist()}
    if name == "lstm":
        layers, b, c = size["layers"], size["b"], size["c"]
        return {
            "main_params": (0.5 * rng.standard_normal((2 * layers, 4 * b))).tolist(),
            "extra_params": (0.5 * rng.standard_normal((3, b))).tolist(),
            "state": (0.5 * rng.standard_normal((2 * layers, b))).tolist(),
            "sequence": (rng.random((c, b)) < 0.5).astype(float).tolist(),
        }
    if name == "ht":
        return ht_input(rng, size["vertices"], size["points"])
    if name == "ba":
        return {
            "n": size["n"],
            "m": size["m"],
            "p": size["p"],
            "cam": (rng.standard_normal(11) * CAM_SPREAD + CAM_CENTRE).tolist(),
            "x": (rng.standard_normal(3) + [0, 0, 10]).tolist(),
            "w": float(rng.random()),
            "feat": rng.standard_normal(2).tolist(),
        }
    raise KeyError(name)


def ht_input(rng, vertices: int, points: int) -> dict:
    """ht's "complicated" format at ``vertices`` and ``points``: the tool's own tiny hand model
    (22 bones) with more vertices, triangles over them, and more correspondences."""
    raw = ht_tiny_input()
    model = raw["data"]["model"]
    bones = model["bone_count"]
    weights = rng.random((vertices, bones))
    model["base_positions"] = np.hstack((rng.standard_normal((vertices, 3)), np.ones((vertices, 1)))).tolist()
    model["weights"] = (weights / weights.sum(axis=1, keepdims=True)).tolist()
    model["triangles"] = [[i, (i + 1) % vertices, (i + 2) % vertices] for i in range(vertices)]
    raw["data"]["correspondences"] = rng.integers(0, vertices, points).tolist()
    raw["data"]["points"] = rng.standard_normal((points, 3)).tolist()
    raw["us"] = rng.random((points, 2)).tolist()
    raw["theta"] = (0.3 * rng.standard_normal(len(raw["theta"]))).tolist()
    return raw


def median_ns(timings) -> float:
    return statistics.median(t["nanoseconds"] for t in timings)


def time_peer(fn, args, min_runs: int, min_seconds: float):
    """Median nanoseconds of ``fn(*args)`` after one warm-up (compilation), and its last result;
    ``fn`` itself waits for its result (``block_until_ready``), so each run ends when it exists."""
    result = fn(*args)
    times = []
    total = 0
    while len(times) < min_runs or total < min_seconds * 1e9:
        start = time.perf_counter_ns()
        result = fn(*args)
        elapsed = time.perf_counter_ns() - start
        times.append(elapsed)
        total += elapsed
    return statistics.median(times), result


def flat(output) -> np.ndarray:
    """A derivative output of GradBench's structure as one flat vector (gmm's dict in its order)."""
    if isinstance(output, dict):
        return np.concatenate([np.ravel(np.asarray(output[key], dtype=np.float64)) for key in output])
    return np.ravel(np.asarray(output, dtype=np.float64))


def measure(session: Session, name: str, raw, min_runs: int, min_seconds: float):
    """sourcead's primal and derivative medians (ns) as the tool times them, and the derivative."""
    primal_name, derivative_name = FUNCTIONS[name]
    if isinstance(raw, dict):
        raw = raw | {"min_runs": min_runs, "min_seconds": min_seconds}
    figures = []
    output = None
    for function in (primal_name, derivative_name):
        reply = session.evaluate(name, function, raw)
        if not reply["success"]:
            raise RuntimeError(reply["error"].strip().splitlines()[-1])
        figures.append(median_ns(reply["timings"]))
        output = reply["output"]
    return figures[0], figures[1], output


def peer_cell(peer, name: str, args, ours, min_runs: int, min_seconds: float) -> tuple[str, str]:
    """A peer's derivative/primal and its agreement with ours, or a note saying why there is none."""
    try:
        made = peer(name, args)
        if isinstance(made, str):
            return made, ""
        primal_fn, derivative_fn, peer_args = made
        primal_ns, _ = time_peer(primal_fn, peer_args, min_runs, min_seconds)
        derivative_ns, result = time_peer(derivative_fn, peer_args, min_runs, min_seconds)
        theirs = np.concatenate([np.ravel(np.asarray(part, dtype=np.float64)) for part in result])
        mine = flat(ours)
        scale = max(float(np.max(np.abs(mine))), 1e-300)
        error = float(np.max(np.abs(theirs - mine))) / scale if theirs.shape == mine.shape else float("inf")
        agree = "agrees" if error <= AGREEMENT else "DIFFERS"
        return f"{derivative_ns / primal_ns:.2f} ({fmt_ns(derivative_ns)})", f"{agree}, {error:.1e}"
    except ImportError as exc:
        return f"not installed ({exc.name})", ""
    except Exception as exc:  # noqa: BLE001 - a failing peer is a note, never a crash
        return f"failed: {type(exc).__name__}: {str(exc).splitlines()[0][:60] if str(exc) else ''}", ""


def fmt_ns(ns: float) -> str:
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e3:.1f} us"


def size_text(size: dict) -> str:
    return ", ".join(f"{key}={value}" for key, value in size.items()) or "scalar"


PEERS = ("jax_peer", "torch_peer")


def evals_table(
    names=tuple(FUNCTIONS),
    sizes=SIZES,
    jit: bool = True,
    peers: bool = True,
    min_runs: int = MIN_RUNS,
    min_seconds: float = MIN_SECONDS,
) -> list[str]:
    """The table's markdown lines: one row per eval in ``names``; the peers run after sourcead,
    each in a process of its own, on the same decoded inputs."""
    session = Session(jit)
    lines = [
        "| eval | size | sourcead primal | sourcead derivative | sourcead deriv/primal "
        "| JAX deriv/primal | JAX vs sourcead | PyTorch deriv/primal | PyTorch vs sourcead |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    rows = []  # (name, our cells, decoded arguments, our derivative)
    for name in names:
        assert name in EVALS, name
        raw = make_input(name, sizes[name])
        defined = session.define(name)
        if not defined["success"]:
            lines.append(
                f"| {name} | {size_text(sizes[name])} | define failed: {defined['error'].strip().splitlines()[-1]} |"
            )
            continue
        try:
            primal_ns, derivative_ns, ours = measure(session, name, raw, min_runs, min_seconds)
        except Exception as exc:  # noqa: BLE001
            lines.append(f"| {name} | {size_text(sizes[name])} | evaluate failed: {exc} |")
            continue
        args = session.modules[name][FUNCTIONS[name][1]].decode(raw)
        cells = [fmt_ns(primal_ns), fmt_ns(derivative_ns), f"{derivative_ns / primal_ns:.2f}"]
        rows.append((name, cells, args, ours))
    jobs = [(name, args, ours) for name, _, args, ours in rows]
    by_peer = [peer_cells_apart(peer, jobs, min_runs, min_seconds) if peers else None for peer in PEERS]
    for index, (name, cells, _, _) in enumerate(rows):
        for found in by_peer:
            cells.extend(found[index] if found is not None else ("not run", ""))
        lines.append(f"| {name} | {size_text(sizes[name])} | " + " | ".join(cells) + " |")
    return lines


def peer_cells_apart(peer: str, jobs, min_runs: int, min_seconds: float) -> list[tuple[str, str]]:
    """``peer_cell`` of every job, in a child process (a peer's thread pool and numba's in one
    process slow each other down, see README "Against JAX, PyTorch and autograd")."""
    with tempfile.TemporaryDirectory() as folder:
        given, taken = Path(folder) / "jobs.pkl", Path(folder) / "cells.pkl"
        given.write_bytes(pickle.dumps((peer, jobs, min_runs, min_seconds)))
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks.gradbench_evals", str(given), str(taken)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0 or not taken.exists():
            last = (done.stderr.strip().splitlines() or ["no output"])[-1][:80]
            return [(f"failed: exit {done.returncode}: {last}", "")] * len(jobs)
        return pickle.loads(taken.read_bytes())


def peer_child(given: str, taken: str) -> None:
    from benchmarks import gradbench_tool_peers

    peer_name, jobs, min_runs, min_seconds = pickle.loads(Path(given).read_bytes())
    peer = getattr(gradbench_tool_peers, peer_name)
    cells = [peer_cell(peer, name, args, ours, min_runs, min_seconds) for name, args, ours in jobs]
    Path(taken).write_bytes(pickle.dumps(cells))


def gradbench_evals_report(jit: bool = True, peers: bool = True) -> str:
    start = time.perf_counter()
    lines = evals_table(jit=jit, peers=peers)
    elapsed = time.perf_counter() - start
    return "\n".join(
        [
            "## GradBench evals",
            "",
            "The tool's own functions (`benchmarks/gradbench_tool`), as its `evaluate` times them: the "
            f"median of at least {MIN_RUNS} runs lasting {MIN_SECONDS} s together, compilation in `define`. "
            "Inputs are GradBench's formats made here with a seeded rng at GradBench's default sizes (the "
            "largest of each eval's default list; det at ell 10 and ba at ba1's sizes, see SIZES). "
            "JAX (`jax.jit`, every run waiting with `block_until_ready`) and PyTorch (eager, CPU) run the "
            "same eval written vectorised, on the same decoded inputs; the time in brackets is their "
            "derivative's, and 'vs sourcead' is max |peer - ours| / max |ours| of the derivative "
            f"('agrees' at most {AGREEMENT:g}). kmeans' ratio is `dir` against `cost`.",
            "",
            *lines,
            "",
            f"Section time {elapsed:.0f} s.",
        ]
    )


if __name__ == "__main__":  # the peers' child process (peer_cells_apart)
    peer_child(sys.argv[1], sys.argv[2])
