"""GradBench's ``ht`` (ADBench's hand tracking): a skinned hand model (bones with Euler-angle
joints, a global rotation, scale 1 and translation; vertices blended over bones by weights) is
posed by theta (26 numbers); ``objective`` is each data point minus its model point (a vertex,
or in the "complicated" variant a point of a triangle at barycentric (u0, u1) given per point),
3 numbers per point; ``jacobian`` is its Jacobian, rows the errors, columns d/du0 and d/du1 of the
point's own (u0, u1) (complicated variant only) and then the 26 of theta.

The Jacobian has 3 x points rows and 28 columns, every row depending on all of theta and on its
own point's (u0, u1) alone: forward mode is the side with few directions, and a colouring (sparse)
would give the same 28 (26 for theta, one that moves every point's u0 at once, one for u1), at the
cost of a pattern sweep per input (the pattern reads data: correspondences, the angle's branch).
So two of sourcead's vector-mode jvps: 26 tangents for theta, 2 for the u columns (the theta sweep
carries no u tangents, the u sweep no skinning). The objective poses each vertex once (rotation,
scale, translation) and each point only blends its triangle's posed vertices, so the points' loop,
the large one, carries 3 tangent rows per point, not the 9 that rotating every point would. The
result is written into a buffer made by decode (by columns, returned transposed)."""

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
    # skinning: every bone's transform first, then for each vertex the weighted blend of the
    # transforms applied to its base position (the blend is linear: the same as blending the moved
    # positions, with fewer products)
    transforms = np.zeros((n_bones, 3, 4))
    for b in range(n_bones):
        for i in range(3):
            for j in range(4):
                acc = 0.0
                for k in range(4):
                    acc += absolutes[b, i, k] * inverse_base_absolutes[b, k, j]
                transforms[b, i, j] = acc
    positions = np.zeros((n_verts, 3))
    for v in range(n_verts):
        for i in range(3):
            moved = 0.0
            for k in range(4):
                blend = 0.0
                for b in range(n_bones):
                    blend += weights[v, b] * transforms[b, i, k]
                moved += blend * base_positions[v, k]
            positions[v, i] = moved
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
    # every vertex posed once (rotation times scale, then translation): the points only blend them
    posed = np.empty((n_verts, 3))
    for v in range(n_verts):
        for i in range(3):
            acc = pose[2, i]
            for k in range(3):
                acc += rot[i, k] * pose[1, k] * positions[v, k]
            posed[v, i] = acc
    n_points = correspondences.shape[0]
    err = np.empty((n_points, 3))
    for p in range(n_points):
        if complicated == 1:
            t0 = triangles[correspondences[p], 0]
            t1 = triangles[correspondences[p], 1]
            t2 = triangles[correspondences[p], 2]
            u0 = us[p, 0]
            u1 = us[p, 1]
            for i in range(3):
                err[p, i] = points[p, i] - (u0 * posed[t0, i] + u1 * posed[t1, i] + (1.0 - u0 - u1) * posed[t2, i])
        else:
            for i in range(3):
                err[p, i] = points[p, i] - posed[correspondences[p], i]
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


def decode_jacobian(raw):
    """decode's arguments and the Jacobian's buffer, by columns (2 + 26, or 26 in the simple
    variant, each of 3 numbers per point), allocated and touched once per evaluate as the C++
    reference keeps its matrix between runs: a run's time is the derivative's, not page faults'."""
    args = decode(raw)
    columns = np.zeros((2 * args[-1] + N_THETA, 3 * args[8].shape[0]))
    return (*args, columns)


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
    by_theta = sourcead.jvp(ht_objective, wrt="theta", jit=jit)
    by_us = sourcead.jvp(ht_objective, wrt="us", jit=jit)

    def jacobian(*args):
        *args, columns = args
        extra = columns.shape[0] - N_THETA
        _, d_theta = by_theta(*args, tangents=np.eye(N_THETA))  # (26, points, 3): column j, row-major
        columns[extra:] = d_theta.reshape(N_THETA, -1)
        if extra:
            t_us = np.zeros((2,) + args[1].shape)
            t_us[0, :, 0] = 1.0  # every point's own u0 at once: each error depends on its own point's u
            t_us[1, :, 1] = 1.0
            _, d_us = by_us(*args, tangents=t_us)  # (2, points, 3)
            columns[:extra] = d_us.reshape(2, -1)
        return columns.T  # the (3 points, 2 + 26) Jacobian, stored by columns

    return {
        "objective": Function(decode, objective, lambda e: as_list(np.ravel(e))),
        "jacobian": Function(decode_jacobian, jacobian, as_list),
    }
