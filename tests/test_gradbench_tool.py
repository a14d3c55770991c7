"""The GradBench tool (benchmarks/gradbench_tool): GradBench's protocol message by message, and
every eval's derivative against central finite differences of its own primal at a tiny size, in
GradBench's output structure. Plain Python runs (jit=False): no numba compile."""

from __future__ import annotations

import copy
import io
import json
import subprocess
import sys

import numpy as np
import pytest

from benchmarks.gradbench_tool import EVALS, ba, det, gmm, ht, kmeans, llsq, lse, lstm, ode
from benchmarks.gradbench_tool.protocol import serve
from tests.conftest import ROOT

STEP = 1e-6


def replies(messages: list[dict]) -> list[dict]:
    out = io.StringIO()
    serve(io.StringIO("".join(json.dumps(m) + "\n" for m in messages)), out, jit=False)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_hello_session_ids_and_shapes():
    got = replies(
        [
            {"id": 0, "kind": "start", "eval": "hello"},
            {"id": 1, "kind": "define", "module": "hello"},
            {"id": 2, "kind": "evaluate", "module": "hello", "function": "square", "input": 3.0},
            {"id": 3, "kind": "analysis", "of": 2, "valid": True},
            {"id": 4, "kind": "evaluate", "module": "hello", "function": "double", "input": 9.0},
            {"id": 5, "kind": "end"},
        ]
    )
    assert [r["id"] for r in got] == [0, 1, 2, 3, 4, 5]
    assert got[0] == {"id": 0, "tool": "sourcead"}
    assert got[1]["success"] is True and [t["name"] for t in got[1]["timings"]] == ["compile"]
    assert got[2]["success"] is True and got[2]["output"] == 9.0
    assert [t["name"] for t in got[2]["timings"]] == ["evaluate"]
    assert got[3] == {"id": 3} and got[5] == {"id": 5}
    assert got[4]["output"] == 18.0


def test_unknown_and_refused_modules_fail_define():
    got = replies(
        [
            {"id": 7, "kind": "define", "module": "no_such_eval"},
            {"id": 9, "kind": "evaluate", "module": "no_such_eval", "function": "f", "input": {}},
        ]
    )
    assert [r["id"] for r in got] == [7, 9]
    assert all(r["success"] is False and r["error"] for r in got)


def test_min_runs_and_min_seconds_are_honoured():
    base = copy.deepcopy(llsq.TINY)
    got = replies(
        [
            {"id": 0, "kind": "define", "module": "llsq"},
            {"id": 1, "kind": "evaluate", "module": "llsq", "function": "primal", "input": base | {"min_runs": 5}},
            {
                "id": 2,
                "kind": "evaluate",
                "module": "llsq",
                "function": "gradient",
                "input": base | {"min_runs": 1, "min_seconds": 0.05},
            },
        ]
    )
    assert len(got[1]["timings"]) == 5
    assert all(t["name"] == "evaluate" and t["nanoseconds"] > 0 for t in got[1]["timings"])
    assert sum(t["nanoseconds"] for t in got[2]["timings"]) >= 0.05e9
    assert len(got[2]["timings"]) > 1


def test_unknown_function_is_an_error_reply_not_a_crash():
    got = replies(
        [
            {"id": 0, "kind": "define", "module": "lse"},
            {"id": 1, "kind": "evaluate", "module": "lse", "function": "hessian", "input": lse.TINY},
            {"id": 2, "kind": "evaluate", "module": "lse", "function": "primal", "input": lse.TINY},
        ]
    )
    assert got[1]["success"] is False and "hessian" in got[1]["error"]
    assert got[2]["success"] is True


def test_the_module_runs_as_a_program():
    script = "".join(
        json.dumps(m) + "\n"
        for m in (
            {"id": 0, "kind": "start"},
            {"id": 1, "kind": "define", "module": "hello"},
            {"id": 2, "kind": "evaluate", "module": "hello", "function": "double", "input": 2.5},
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.gradbench_tool", "--no-jit"],
        input=script,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=True,
    )
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["id"] for r in lines] == [0, 1, 2] and lines[2]["output"] == 5.0


# --- derivatives against central finite differences of each eval's own primal --------------------


def fd_gradient(f, args: tuple, position: int) -> np.ndarray:
    x = np.asarray(args[position], dtype=np.float64)
    out = np.zeros(x.shape)
    for index in np.ndindex(x.shape):
        moved = []
        for sign in (1.0, -1.0):
            bumped = x.copy()
            bumped[index] += sign * STEP
            moved.append(f(*args[:position], bumped, *args[position + 1 :]))
        out[index] = (moved[0] - moved[1]) / (2 * STEP)
    return out


def close(got, want, tol=1e-6):
    """Largest difference relative to the largest entry (gradients of small size stay checked)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    assert np.max(np.abs(want)) > 0.0
    assert np.max(np.abs(got - want)) <= tol * np.max(np.abs(want))


@pytest.mark.parametrize(
    ("module", "objective"), [(llsq, llsq.llsq_objective), (lse, lse.logsumexp), (det, det.det_by_minors)]
)
def test_scalar_gradients_match_finite_differences(module, objective):
    primal_name, position = "primal", 0
    functions = module.define(jit=False)
    args = functions["gradient"].decode(module.TINY)
    got = functions["gradient"].encode(functions["gradient"].run(*args))
    assert isinstance(got, list) and all(isinstance(v, float) for v in got)
    close(got, fd_gradient(objective, args, position))
    value = functions[primal_name].encode(functions[primal_name].run(*args))
    assert isinstance(value, float) and value == objective(*args)


@pytest.mark.parametrize("ell", [1, 2, 4, 5])
def test_det_gradient_walks_every_depth(ell):
    functions = det.define(jit=False)
    a = np.random.default_rng(ell).random(ell * ell) + 0.1
    got = functions["gradient"].run(a, ell)
    close(got, fd_gradient(det.det_by_minors, (a, ell), 0))
    close(det.det_by_minors(a, ell), np.linalg.det(a.reshape(ell, ell)), 1e-12)


def test_det_primal_is_the_determinant():
    a = np.array(det.TINY["A"]).reshape(3, 3)
    close(det.det_by_minors(*det.decode(det.TINY)), np.linalg.det(a), 1e-12)
    rng = np.random.default_rng(3)
    b = rng.random(25)
    close(det.det_by_minors(b, 5), np.linalg.det(b.reshape(5, 5)), 1e-12)


def test_ode_gradient_of_the_last_element():
    functions = ode.define(jit=False)
    args = functions["gradient"].decode(ode.TINY)
    got = functions["gradient"].encode(functions["gradient"].run(*args))
    close(got, fd_gradient(ode.ode_last, args, 0))
    y = functions["primal"].encode(functions["primal"].run(*args))
    assert len(y) == len(ode.TINY["x"]) and y[-1] == ode.ode_last(*args)


def test_gmm_jacobian_structure_and_values():
    functions = gmm.define(jit=False)
    args = functions["jacobian"].decode(gmm.TINY)
    got = functions["jacobian"].encode(functions["jacobian"].run(*args))
    assert sorted(got) == ["alpha", "l", "mu", "q"]
    for name, position in (("alpha", 0), ("mu", 1), ("q", 2), ("l", 3)):
        assert np.shape(got[name]) == np.shape(gmm.TINY[name])
        close(got[name], fd_gradient(gmm.gmm_objective, args, position))


def test_gmm_objective_matches_the_density_written_out():
    # GradBench's naive check, in short: log of the mixture likelihood times the Wishart priors
    from scipy.special import multigammaln

    t = gmm.TINY
    d, k, m, gamma = t["d"], t["k"], t["m"], t["gamma"]
    phi = np.exp(t["alpha"]) / np.sum(np.exp(t["alpha"]))
    qs = []
    for j in range(k):
        q = np.diag(np.exp(t["q"][j]))
        rows, cols = np.tril_indices(d, -1)
        order = np.lexsort((rows, cols))  # column by column, as GradBench stores l
        q[rows[order], cols[order]] = t["l"][j]
        qs.append(q)
    log_like = 0.0
    for x in np.array(t["x"]):
        dens = 0.0
        for j in range(k):
            s_inv = qs[j].T @ qs[j]
            r = x - np.array(t["mu"][j])
            dens += phi[j] * np.exp(-0.5 * r @ s_inv @ r) / np.sqrt((2 * np.pi) ** d / np.linalg.det(s_inv))
        log_like += np.log(dens)
    dof = d + m + 1
    log_prior = 0.0
    for j in range(k):
        s_inv = qs[j].T @ qs[j]
        log_prior += (
            0.5 * (dof - d - 1) * np.log(np.linalg.det(s_inv))
            - 0.5 * gamma * gamma * np.trace(s_inv)
            - 0.5 * d * dof * np.log(2.0)
            + d * dof * np.log(gamma)
            - multigammaln(dof / 2, d)
        )
    close(gmm.gmm_objective(*gmm.decode(t)), log_like + log_prior, 1e-10)


def test_kmeans_dir_is_gradient_over_the_hessian_diagonal():
    functions = kmeans.define(jit=False)
    args = functions["dir"].decode(kmeans.TINY)
    got = np.array(functions["dir"].encode(functions["dir"].run(*args)))
    assert got.shape == np.shape(kmeans.TINY["centroids"])
    points, centroids = args
    jac = fd_gradient(kmeans.kmeans_cost, args, 1)
    h = 1e-4
    diag = np.zeros(centroids.shape)
    for index in np.ndindex(centroids.shape):
        up, down = centroids.copy(), centroids.copy()
        up[index] += h
        down[index] -= h
        f0 = kmeans.kmeans_cost(points, centroids)
        diag[index] = (kmeans.kmeans_cost(points, up) - 2 * f0 + kmeans.kmeans_cost(points, down)) / h**2
    close(got, jac / diag, 1e-5)
    assert functions["cost"].encode(functions["cost"].run(*args)) == kmeans.kmeans_cost(*args)


def test_lstm_jacobian_is_both_gradients_flattened_row_by_row():
    functions = lstm.define(jit=False)
    args = functions["jacobian"].decode(lstm.TINY)
    got = np.array(functions["jacobian"].encode(functions["jacobian"].run(*args)))
    main = fd_gradient(lstm.lstm_objective, args, 0)
    extra = fd_gradient(lstm.lstm_objective, args, 1)
    assert got.shape == (main.size + extra.size,)
    close(got[: main.size], main.ravel())
    close(got[main.size :], extra.ravel())
    assert functions["objective"].encode(functions["objective"].run(*args)) == lstm.lstm_objective(*args)


def test_ba_sparse_jacobian_is_the_whole_jacobian():
    functions = ba.define(jit=False)
    cams, X, w, obs, feats, *buffers = functions["jacobian"].decode(ba.TINY)
    rng = np.random.default_rng(5)  # every camera, point and weight its own, so that no block hides another
    cams = cams * (1.0 + 0.05 * rng.standard_normal(cams.shape))
    X = X * (1.0 + 0.05 * rng.standard_normal(X.shape))
    w = w * (1.0 + 0.05 * rng.standard_normal(w.shape))
    rows, cols, vals = functions["jacobian"].run(cams, X, w, obs, feats, *buffers)
    sizes = (cams.size, X.size, w.size)

    def flat_objective(theta):
        c = theta[: sizes[0]].reshape(cams.shape)
        x = theta[sizes[0] : sizes[0] + sizes[1]].reshape(X.shape)
        ww = theta[sizes[0] + sizes[1] :]
        return np.concatenate((ba.ba_residuals(c, x, ww, obs, feats).ravel(), ba.weight_errors(ww)))

    theta = np.concatenate((cams.ravel(), X.ravel(), w))
    want = np.zeros((3 * w.size, theta.size))
    for k in range(theta.size):
        up, down = theta.copy(), theta.copy()
        up[k] += STEP
        down[k] -= STEP
        want[:, k] = (flat_objective(up) - flat_objective(down)) / (2 * STEP)
    assert len(rows) == want.shape[0] + 1 and rows[-1] == len(cols) == len(vals)
    dense = np.zeros(want.shape)
    for r in range(want.shape[0]):
        for q in range(rows[r], rows[r + 1]):
            dense[r, cols[q]] += vals[q]
    close(dense, want, 1e-5)
    assert np.count_nonzero(want) <= len(vals)  # the sparse form, not a dense Jacobian
    sent = functions["jacobian"].encode((rows, cols, vals))
    assert sorted(sent) == ["cols", "rows", "vals"] and all(len(v) == 31 for v in sent.values())
    assert (sent["rows"][-1], sent["cols"][-1], sent["vals"][-1]) == (rows[-1], cols[-1], vals[-1])


def test_ba_objective_output_is_the_reference_structure():
    functions = ba.define(jit=False)
    got = functions["objective"].encode(functions["objective"].run(*functions["objective"].decode(ba.TINY)))
    assert got["reproj_error"]["repeated"] == ba.TINY["p"] and len(got["reproj_error"]["elements"]) == 2
    assert got["w_err"] == {"element": 1.0 - ba.TINY["w"] ** 2, "repeated": ba.TINY["p"]}


@pytest.mark.parametrize("complicated", [True, False])
def test_ht_jacobian_columns_are_u_then_theta(complicated):
    raw = copy.deepcopy(ht.TINY)
    if not complicated:
        raw["us"] = []
    functions = ht.define(jit=False)
    buffered = functions["jacobian"].decode(raw)  # the arguments, then the Jacobian's buffer
    got = np.array(functions["jacobian"].encode(functions["jacobian"].run(*buffered)))
    again = np.array(functions["jacobian"].encode(functions["jacobian"].run(*buffered)))
    assert np.array_equal(got, again)  # a second run into the same buffer: the same Jacobian
    args = functions["objective"].decode(raw)
    n_points = len(raw["data"]["correspondences"])
    extra = 2 if complicated else 0
    assert got.shape == (3 * n_points, extra + ht.N_THETA)

    def errors(theta, us):
        return ht.ht_objective(theta, us, *args[2:]).ravel()

    theta, us = args[0], args[1]
    want_theta = np.stack([fd_gradient(lambda t, j=j: errors(t, us)[j], (theta,), 0) for j in range(3 * n_points)])
    close(got[:, extra:], want_theta)
    if complicated:
        for column in range(2):
            moved = []
            for sign in (1.0, -1.0):
                shifted = us.copy()
                shifted[:, column] += sign * STEP  # every point's own u: errors depend on their own alone
                moved.append(errors(theta, shifted))
            close(got[:, column], (moved[0] - moved[1]) / (2 * STEP))
    value = functions["objective"].encode(functions["objective"].run(*args))
    assert len(value) == 3 * n_points


def test_every_listed_eval_defines():
    for name in EVALS:
        got = replies([{"id": 0, "kind": "define", "module": name}])
        assert got[0]["success"] is True, got[0].get("error")


@pytest.mark.parametrize("complicated", [True, False])
def test_ht_objective_matches_the_model_written_with_matrices(complicated):
    """The loop-style objective against the hand model in matrices, its rotations from SciPy."""
    from scipy.spatial.transform import Rotation

    raw = copy.deepcopy(ht.TINY)
    if not complicated:
        raw["us"] = []
    args = ht.decode(raw)
    theta, us, parents, base_relatives, inverse_base_absolutes, base_positions, weights = args[:7]
    triangles, correspondences, points = args[7:10]
    pose = np.zeros((parents.shape[0] + 3, 3))  # GradBench's pose columns, filled from theta
    pose[0], pose[1], pose[2] = theta[:3], 1.0, theta[3:6]
    t = 6
    for finger in range(5):
        for joint in range(3):
            pose[5 + 4 * finger + joint, 0] = theta[t]
            if joint == 0:
                pose[5 + 4 * finger, 1] = theta[t + 1]
            t += 2 if joint == 0 else 1
    absolutes = []
    for b, parent in enumerate(parents):
        joint = np.eye(4)
        joint[:3, :3] = Rotation.from_euler("ZYX", [pose[b + 3, 1], pose[b + 3, 2], pose[b + 3, 0]]).as_matrix()
        relative = base_relatives[b] @ joint
        absolutes.append(relative if parent == -1 else absolutes[parent] @ relative)
    transforms = (np.array(absolutes) @ inverse_base_absolutes)[:, :3, :]
    positions = np.einsum("vb,bik,vk->vi", weights, transforms, base_positions)
    posed = positions @ Rotation.from_rotvec(pose[0]).as_matrix().T * pose[1] + pose[2]
    corners = posed[triangles[correspondences]]  # (points, 3 corners, 3)
    if complicated:
        model = us[:, :1] * corners[:, 0] + us[:, 1:] * corners[:, 1] + (1 - us.sum(axis=1))[:, None] * corners[:, 2]
    else:
        model = posed[correspondences]
    close(ht.ht_objective(*args), points - model)
