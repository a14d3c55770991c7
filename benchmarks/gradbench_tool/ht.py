"""GradBench's ``ht`` (ADBench's hand tracking): a skinned hand model (bones with Euler-angle
joints, a global rotation, scale 1 and translation; vertices blended over bones by weights) is
posed by theta (26 numbers); ``objective`` is each data point minus its model point (a vertex,
or in the "complicated" variant a point of a triangle at barycentric (u0, u1) given per point),
3 numbers per point; ``jacobian`` is its Jacobian, rows the errors, columns d/du0 and d/du1 of the
point's own (u0, u1) (complicated variant only) and then the 26 of theta.

The Jacobian is one forward sweep of sourcead's jvp carrying 28 tangents (26 for theta, and two
that move every point's u0, respectively u1, at once: each error depends on its own point's u
alone, so these give the two u columns without mixing points)."""

from __future__ import annotations

import math

import numpy as np

import sourcead
from benchmarks.gradbench_tool.common import Function, as_list, primal, vector

N_THETA = 26


def ht_objective(
    theta,
    us,
    parents,
    base_relatives,
    inverse_base_absolutes,
    base_positions,
    weights,
    triangles,
    correspondences,
    points,
    mirrored,
    complicated,
):
    n_bones = parents.shape[0]
    n_verts = base_positions.shape[0]
    # pose[k] = column k of GradBench's 3 x (bones + 3) pose parameters
    pose = np.zeros((n_bones + 3, 3))
    for r in range(3):
        pose[0, r] = theta[r]
        pose[1, r] = 1.0
        pose[2, r] = theta[3 + r]
    t = 6
    col = 5
    for _finger in range(5):
        for joint in range(3):
            pose[col, 0] = theta[t]
            t += 1
            if joint == 0:
                pose[col, 1] = theta[t]
                t += 1
            col += 1
        col += 1
    # each bone: its base relative transform times its joint rotation Rz Ry Rx, chained to the root
    absolutes = np.zeros((n_bones, 4, 4))
    relative = np.zeros((4, 4))
    rot = np.zeros((3, 3))
    for b in range(n_bones):
        cx = math.cos(pose[b + 3, 0])
        sx = math.sin(pose[b + 3, 0])
        cy = math.cos(pose[b + 3, 2])
        sy = math.sin(pose[b + 3, 2])
        cz = math.cos(pose[b + 3, 1])
        sz = math.sin(pose[b + 3, 1])
        rot[0, 0] = cz * cy
        rot[0, 1] = -sz * cx + cz * sy * sx
        rot[0, 2] = sz * sx + cz * sy * cx
        rot[1, 0] = sz * cy
        rot[1, 1] = cz * cx + sz * sy * sx
        rot[1, 2] = -cz * sx + sz * sy * cx
        rot[2, 0] = -sy
        rot[2, 1] = cy * sx
        rot[2, 2] = cy * cx
        for i in range(4):
            for j in range(3):
                acc = 0.0
                for k in range(3):
                    acc += base_relatives[b, i, k] * rot[k, j]
                relative[i, j] = acc
            relative[i, 3] = base_relatives[b, i, 3]
        if parents[b] == -1:
            for i in range(4):
                for j in range(4):
                    absolutes[b, i, j] = relative[i, j]
        else:
            for i in range(4):
                for j in range(4):
                    acc = 0.0
                    for k in range(4):
                        acc += absolutes[parents[b], i, k] * relative[k, j]
                    absolutes[b, i, j] = acc
    # skinning: every vertex moved by every bone's transform, blended by the weights
    positions = np.zeros((n_verts, 3))
    transform = np.zeros((3, 4))
    for b in range(n_bones):
        for i in range(3):
            for j in range(4):
                acc = 0.0
                for k in range(4):
                    acc += absolutes[b, i, k] * inverse_base_absolutes[b, k, j]
                transform[i, j] = acc
        for v in range(n_verts):
            for i in range(3):
                moved = 0.0
                for k in range(4):
                    moved += transform[i, k] * base_positions[v, k]
                positions[v, i] += moved * weights[v, b]
    if mirrored == 1:
        for v in range(n_verts):
            positions[v, 0] = -positions[v, 0]
    # global rotation (angle-axis, identity below 1e-4), scale (pose[1]) and translation (pose[2])
    norm = math.sqrt(pose[0, 0] * pose[0, 0] + pose[0, 1] * pose[0, 1] + pose[0, 2] * pose[0, 2])
    if norm < 0.0001:
        for i in range(3):
            for j in range(3):
                rot[i, j] = 0.0
            rot[i, i] = 1.0
    else:
        x = pose[0, 0] / norm
        y = pose[0, 1] / norm
        z = pose[0, 2] / norm
        s = math.sin(norm)
        c = math.cos(norm)
        rot[0, 0] = x * x + (1.0 - x * x) * c
        rot[0, 1] = x * y * (1.0 - c) - z * s
        rot[0, 2] = x * z * (1.0 - c) + y * s
        rot[1, 0] = x * y * (1.0 - c) + z * s
        rot[1, 1] = y * y + (1.0 - y * y) * c
        rot[1, 2] = y * z * (1.0 - c) - x * s
        rot[2, 0] = x * z * (1.0 - c) - y * s
        rot[2, 1] = z * y * (1.0 - c) + x * s
        rot[2, 2] = z * z + (1.0 - z * z) * c
    n_points = correspondences.shape[0]
    err = np.empty((n_points, 3))
    for p in range(n_points):
        for i in range(3):
            if complicated == 1:
                t0 = triangles[correspondences[p], 0]
                t1 = triangles[correspondences[p], 1]
                t2 = triangles[correspondences[p], 2]
                model = 0.0
                for k in range(3):
                    corner = us[p, 0] * positions[t0, k] + us[p, 1] * positions[t1, k]
                    corner += (1.0 - us[p, 0] - us[p, 1]) * positions[t2, k]
                    model += rot[i, k] * pose[1, k] * corner
            else:
                model = 0.0
                for k in range(3):
                    model += rot[i, k] * pose[1, k] * positions[correspondences[p], k]
            err[p, i] = points[p, i] - (model + pose[2, i])
    return err


def decode(raw):
    model = raw["data"]["model"]
    us = vector(raw["us"]) if len(raw["us"]) else np.zeros((len(raw["data"]["correspondences"]), 2))
    return (
        vector(raw["theta"]),
        us.reshape(-1, 2),
        np.asarray(model["parents"], dtype=np.int64),
        vector(model["base_relatives"]),
        vector(model["inverse_base_absolutes"]),
        vector(model["base_positions"]),
        vector(model["weights"]),
        np.asarray(model["triangles"], dtype=np.int64).reshape(-1, 3),
        np.asarray(raw["data"]["correspondences"], dtype=np.int64),
        vector(raw["data"]["points"]),
        1 if model["is_mirrored"] else 0,
        1 if len(raw["us"]) else 0,
    )


def tiny_input() -> dict:
    """22 bones (the 26 theta fill 25 pose columns), 6 vertices, 4 triangles, 3 points."""
    rng = np.random.default_rng(7)
    bones = 22
    parents = [-1] + [0 if b % 4 == 1 else b - 1 for b in range(1, bones)]

    def rigid():
        q, _ = np.linalg.qr(rng.standard_normal((3, 3)))
        m = np.eye(4)
        m[:3, :3] = q
        m[:3, 3] = 0.1 * rng.standard_normal(3)
        return m.tolist()

    weights = rng.random((6, bones))
    return {
        "theta": (0.3 * rng.standard_normal(N_THETA)).tolist(),
        "us": rng.random((3, 2)).tolist(),
        "data": {
            "model": {
                "bone_count": bones,
                "bone_names": [f"bone{b}" for b in range(bones)],
                "parents": parents,
                "base_relatives": [rigid() for _ in range(bones)],
                "inverse_base_absolutes": [rigid() for _ in range(bones)],
                "base_positions": np.hstack((rng.standard_normal((6, 3)), np.ones((6, 1)))).tolist(),
                "weights": (weights / weights.sum(axis=1, keepdims=True)).tolist(),
                "triangles": [[0, 1, 2], [1, 2, 3], [3, 4, 5], [0, 4, 5]],
                "is_mirrored": False,
            },
            "correspondences": [2, 0, 3],
            "points": rng.standard_normal((3, 3)).tolist(),
        },
        "min_runs": 1,
        "min_seconds": 0.0,
    }


TINY = tiny_input()


def define(jit: bool) -> dict[str, Function]:
    objective = primal(ht_objective, jit)
    forward = sourcead.jvp(ht_objective, wrt=("theta", "us"), jit=jit)

    def jacobian(*args):
        us = args[1]
        complicated = args[-1] == 1
        extra = 2 if complicated else 0
        k = extra + N_THETA
        t_theta = np.zeros((k, N_THETA))
        t_us = np.zeros((k,) + us.shape)
        if complicated:
            t_us[0, :, 0] = 1.0
            t_us[1, :, 1] = 1.0
        for j in range(N_THETA):
            t_theta[extra + j, j] = 1.0
        _, dots = forward(*args, tangents=(t_theta, t_us))
        return dots.reshape(k, -1).T

    return {
        "objective": Function(decode, objective, lambda e: as_list(np.ravel(e))),
        "jacobian": Function(decode, jacobian, as_list),
    }
