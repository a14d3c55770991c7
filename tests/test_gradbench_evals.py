"""The "GradBench evals" bench section builds its table from the tool's own functions: inputs of
each eval's format at a given size, one row per eval, and a peer's derivative compared with ours."""

import numpy as np

from benchmarks import gradbench_evals
from benchmarks.gradbench_tool.protocol import Session


def test_table_rows_for_tiny_evals_without_peers():
    lines = gradbench_evals.evals_table(
        names=("llsq", "lse", "kmeans"),
        sizes=gradbench_evals.TINY_SIZES,
        jit=False,
        peers=False,
        min_runs=2,
        min_seconds=0.0,
    )
    assert len(lines) == 2 + 3
    for name, line in zip(("llsq", "lse", "kmeans"), lines[2:], strict=True):
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        assert cells[0] == name
        assert "failed" not in line
        assert float(cells[4]) > 0.0  # the derivative/primal ratio


def test_inputs_have_the_requested_sizes():
    raw = gradbench_evals.make_input("gmm", {"d": 3, "k": 4, "n": 5})
    assert np.shape(raw["x"]) == (5, 3) and np.shape(raw["l"]) == (4, 3)
    raw = gradbench_evals.make_input("ht", {"vertices": 9, "points": 4})
    assert np.shape(raw["data"]["model"]["weights"])[0] == 9 and np.shape(raw["us"]) == (4, 2)


def test_peer_cell_reports_disagreement_and_failure():
    session = Session(jit=False)
    session.define("lse")
    raw = gradbench_evals.make_input("lse", {"n": 5}) | {"min_runs": 1, "min_seconds": 0.0}
    ours = session.evaluate("lse", "gradient", raw)["output"]
    args = session.modules["lse"]["gradient"].decode(raw)

    def shifted_peer(name, args):  # a wrong derivative: ours plus 1e-3
        return (lambda x: 0.0), (lambda x: (np.asarray(ours) + 1e-3,)), args

    def broken_peer(name, args):
        raise ValueError("no such eval")

    ratio, verdict = gradbench_evals.peer_cell(shifted_peer, "lse", args, ours, 1, 0.0)
    assert verdict.startswith("DIFFERS")
    ratio, verdict = gradbench_evals.peer_cell(broken_peer, "lse", args, ours, 1, 0.0)
    assert ratio.startswith("failed: ValueError") and verdict == ""


def test_peer_failing_in_its_process_is_a_note():
    cells = gradbench_evals.peer_cells_apart("no_such_peer", [("lse", (np.zeros(3),), [0.0, 0.0, 0.0])], 1, 0.0)
    assert len(cells) == 1 and cells[0][0].startswith("failed: exit 1") and "AttributeError" in cells[0][0]
