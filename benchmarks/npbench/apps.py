# ruff: noqa: E741 (NPBench's names: I, J, K, l)
"""NPBench's application kernels (physics, CFD, deep learning, sparse, pythran), as their numba
versions are written (decorator removed), in our own words; objectives and inputs as in linalg.py.
Helper functions the kernels call keep their NPBench names under a kernel prefix."""

from __future__ import annotations

import numpy as np

from benchmarks.npbench.common import rng


# ---- arc_distance: pairwise great-circle distance -------------------------------------------
def arc_distance_kernel(theta_1, phi_1, theta_2, phi_2):
    temp = np.sin((theta_2 - theta_1) / 2) ** 2 + np.cos(theta_1) * np.cos(theta_2) * np.sin((phi_2 - phi_1) / 2) ** 2
    distance_matrix = 2 * (np.arctan2(np.sqrt(temp), np.sqrt(1 - temp)))
    return distance_matrix


def arc_distance_objective(theta_1, phi_1, theta_2, phi_2):
    return np.sum(arc_distance_kernel(theta_1, phi_1, theta_2, phi_2))


def init_arc_distance(N):
    g = rng()
    return g.random(N), g.random(N), g.random(N), g.random(N)


# ---- go_fast: the numba docs' first example -------------------------------------------------
def go_fast_kernel(a):
    trace = 0.0
    for i in range(a.shape[0]):
        trace += np.tanh(a[i, i])
    return a + trace


def go_fast_objective(a):
    return np.sum(go_fast_kernel(a))


def init_go_fast(N):
    return (rng().random((N, N)),)


# ---- azimint_naive / azimint_hist: azimuthal integration by masks and by a histogram -------
def azimint_naive_kernel(data, radius, npt):
    rmax = radius.max()
    res = np.zeros(npt, dtype=np.float64)
    for i in range(npt):
        r1 = rmax * i / npt
        r2 = rmax * (i + 1) / npt
        mask_r12 = np.logical_and((r1 <= radius), (radius < r2))
        values_r12 = data[mask_r12]
        res[i] = values_r12.mean()
    return res


def azimint_naive_objective(data, radius, npt):
    return np.sum(azimint_naive_kernel(data, radius, npt))


def init_azimint(N, npt):
    g = rng()
    return g.random(N), g.random(N), npt


def azimint_hist_get_bin_edges(a, bins):
    bin_edges = np.zeros((bins + 1,), dtype=np.float64)
    a_min = a.min()
    a_max = a.max()
    delta = (a_max - a_min) / bins
    for i in range(bin_edges.shape[0]):
        bin_edges[i] = a_min + i * delta
    bin_edges[-1] = a_max
    return bin_edges


def azimint_hist_compute_bin(x, bin_edges):
    n = bin_edges.shape[0] - 1
    a_min = bin_edges[0]
    a_max = bin_edges[-1]
    if x == a_max:
        return n - 1
    return int(n * (x - a_min) / (a_max - a_min))


def azimint_hist_histogram(a, bins, weights):
    hist = np.zeros((bins,), dtype=a.dtype)
    bin_edges = azimint_hist_get_bin_edges(a, bins)
    for i in range(a.shape[0]):
        bin = azimint_hist_compute_bin(a[i], bin_edges)
        hist[bin] += weights[i]
    return hist, bin_edges


def azimint_hist_kernel(data, radius, npt):
    histu = np.histogram(radius, npt)[0]
    histw = azimint_hist_histogram(radius, npt, weights=data)[0]
    return histw / histu


def azimint_hist_objective(data, radius, npt):
    return np.sum(azimint_hist_kernel(data, radius, npt))


# ---- spmv: CSR sparse matrix times vector ---------------------------------------------------
def spmv_kernel(A_row, A_col, A_val, x):
    y = np.empty(A_row.size - 1, A_val.dtype)
    for i in range(A_row.size - 1):
        cols = A_col[A_row[i] : A_row[i + 1]]
        vals = A_val[A_row[i] : A_row[i + 1]]
        y[i] = vals @ x[cols]
    return y


def spmv_objective(A_row, A_col, A_val, x):
    return np.sum(spmv_kernel(A_row, A_col, A_val, x))


def init_spmv(M, N, nnz):
    g = rng()
    x = g.random(N)
    flat = np.sort(g.choice(M * N, size=nnz, replace=False))
    rows, cols = flat // N, flat % N
    A_row = np.zeros(M + 1, dtype=np.int64)
    np.add.at(A_row, rows + 1, 1)
    return np.cumsum(A_row), cols.astype(np.int64), g.random(nnz), x


# ---- softmax / mlp: a 4-D softmax, and a three-layer perceptron ending in softmax ----------
def softmax_kernel(x):
    new_shape = (x.shape[0], x.shape[1], x.shape[2], 1)
    tmp_max = np.empty(new_shape, dtype=x.dtype)
    for i in range(x.shape[3]):
        tmp_max[:, :, :, 0] = np.max(x[:, :, :, i])
    tmp_out = np.exp(x - tmp_max)
    tmp_sum = np.reshape(np.sum(tmp_out, axis=-1), new_shape)
    return tmp_out / tmp_sum


def softmax_objective(x):
    # the sum of a softmax is 1 per row whatever x is: weight the outputs so the gradient is not 0
    out = softmax_kernel(x)
    return np.sum(out * out)


def init_softmax(N, H, SM):
    return (rng().random((N, H, SM, SM)),)


def mlp_relu(x):
    return np.maximum(x, 0)


def mlp_softmax(x):
    new_shape = (x.shape[0], 1)
    tmp_max = np.empty(new_shape, dtype=x.dtype)
    for i in range(x.shape[1]):
        tmp_max[:, 0] = np.max(x[:, i])
    tmp_out = np.exp(x - tmp_max)
    tmp_sum = np.reshape(np.sum(tmp_out, axis=-1), new_shape)
    return tmp_out / tmp_sum


def mlp_kernel(input, w1, b1, w2, b2, w3, b3):
    x = mlp_relu(input @ w1 + b1)
    x = mlp_relu(x @ w2 + b2)
    x = mlp_softmax(x @ w3 + b3)
    return x


def mlp_objective(input, w1, b1, w2, b2, w3, b3):
    out = mlp_kernel(input, w1, b1, w2, b2, w3, b3)
    return np.sum(out * out)


def init_mlp(C_in, N, S0, S1, S2):
    g = rng()
    inp = g.random((N, C_in))
    w1, b1 = g.random((C_in, S0)), g.random(S0)
    w2, b2 = g.random((S0, S1)), g.random(S1)
    # NPBench draws uniform [0, 1) weights; scaled by 1/fan-in so the softmax is not saturated
    return inp, w1 / C_in, b1, w2 / S0, b2, g.random((S1, S2)) / S1, g.random(S2)


# ---- conv2d_bias / lenet / resnet: NHWC convolutions written with 4-D slices -----------------
def conv2d(input, weights):
    K = weights.shape[0]
    N = input.shape[0]
    H_out = input.shape[1] - K + 1
    W_out = input.shape[2] - K + 1
    C_in = input.shape[3]
    C_out = weights.shape[3]
    output = np.empty((N, H_out, W_out, C_out), dtype=np.float32)
    for i in range(H_out):
        for j in range(W_out):
            inp = input[:, i : i + K, j : j + K, :].copy()
            output[:, i, j, :] = np.sum(
                np.sum(
                    np.sum(np.reshape(inp, (N, K, K, C_in, 1)) * np.reshape(weights, (1, K, K, C_in, C_out)), axis=1),
                    axis=1,
                ),
                axis=1,
            )
    return output


def conv2d_bias_kernel(input, weights, bias):
    return conv2d(input, weights) + bias


def conv2d_bias_objective(input, weights, bias):
    return np.sum(conv2d_bias_kernel(input, weights, bias))


def init_conv2d_bias(C_in, C_out, H, K, N, W):
    g = rng()
    return g.random((N, H, W, C_in)), g.random((K, K, C_in, C_out)), g.random(C_out)


def relu(x):
    return np.maximum(x, 0)


def maxpool2d(x):
    output = np.empty((x.shape[0], x.shape[1] // 2, x.shape[2] // 2, x.shape[3]), dtype=x.dtype)
    for i in range(x.shape[1] // 2):
        for j in range(x.shape[2] // 2):
            for k in range(x.shape[0]):
                for l in range(x.shape[3]):  # noqa: E741 (NPBench's name)
                    output[k, i, j, l] = np.max(x[k, 2 * i : 2 * i + 2, 2 * j : 2 * j + 2, l])
    return output


def lenet_kernel(input, conv1, conv1bias, conv2, conv2bias, fc1w, fc1b, fc2w, fc2b, fc3w, fc3b, N, C_before_fc1):
    x = relu(conv2d(input, conv1) + conv1bias)
    x = maxpool2d(x)
    x = relu(conv2d(x, conv2) + conv2bias)
    x = maxpool2d(x)
    x = np.reshape(x, (N, C_before_fc1))
    x = relu(x @ fc1w + fc1b)
    x = relu(x @ fc2w + fc2b)
    return x @ fc3w + fc3b


def lenet_objective(input, conv1, conv1bias, conv2, conv2bias, fc1w, fc1b, fc2w, fc2b, fc3w, fc3b, N, C_before_fc1):
    return np.sum(
        lenet_kernel(input, conv1, conv1bias, conv2, conv2bias, fc1w, fc1b, fc2w, fc2b, fc3w, fc3b, N, C_before_fc1)
    )


def init_lenet(N, H, W):
    g = rng()
    h, w = ((H - 4) // 2 - 4) // 2, ((W - 4) // 2 - 4) // 2
    c_before = 16 * h * w
    shapes = [(N, H, W, 1), (5, 5, 1, 6), (6,), (5, 5, 6, 16), (16,), (c_before, 120), (120,), (120, 84), (84,)]
    arrays = [g.random(s) for s in shapes + [(84, 10), (10,)]]
    return (*arrays, N, c_before)


def batchnorm2d(x, eps=1e-5):
    mean = np.empty(x.shape, dtype=x.dtype)
    mean[:] = np.sum(x, axis=0) / x.shape[0]
    std = np.empty(x.shape, dtype=x.dtype)
    std[:] = np.sqrt(np.sum((x - mean) ** 2, axis=0) / x.shape[0])
    return (x - mean) / np.sqrt(std + eps)


def resnet_kernel(input, conv1, conv2, conv3):
    padded = np.zeros((input.shape[0], input.shape[1] + 2, input.shape[2] + 2, conv1.shape[3]))
    padded[:, 1:-1, 1:-1, :] = conv2d(input, conv1)
    x = batchnorm2d(padded)
    x = relu(x)
    x = conv2d(x, conv2)
    x = batchnorm2d(x)
    x = relu(x)
    x = conv2d(x, conv3)
    x = batchnorm2d(x)
    return relu(x + input)


def resnet_objective(input, conv1, conv2, conv3):
    return np.sum(resnet_kernel(input, conv1, conv2, conv3))


def init_resnet(N, W, H, C1, C2):
    g = rng()
    return g.random((N, H, W, C1)), g.random((1, 1, C1, C2)), g.random((3, 3, C2, C2)), g.random((1, 1, C2, C1))


# ---- nbody: leapfrog N-body with pairwise gravity, energies per step -------------------------
def nbody_getAcc(pos, mass, G, softening):
    x = pos[:, 0:1]
    y = pos[:, 1:2]
    z = pos[:, 2:3]
    dx = x.T - x
    dy = y.T - y
    dz = z.T - z
    inv_r3 = dx**2 + dy**2 + dz**2 + softening**2
    I = inv_r3 > 0  # noqa: E741 (NPBench's name)
    for i in range(I.shape[0]):
        for j in range(I.shape[1]):
            if I[i, j]:
                inv_r3[i, j] **= -1.5
    ax = G * (dx * inv_r3) @ mass
    ay = G * (dy * inv_r3) @ mass
    az = G * (dz * inv_r3) @ mass
    a = np.hstack((ax, ay, az))
    return a


def nbody_getEnergy(pos, vel, mass, G):
    KE = 0.5 * np.sum(mass * vel**2)
    x = pos[:, 0:1]
    y = pos[:, 1:2]
    z = pos[:, 2:3]
    dx = x.T - x
    dy = y.T - y
    dz = z.T - z
    inv_r = np.sqrt(dx**2 + dy**2 + dz**2)
    I = inv_r > 0  # noqa: E741 (NPBench's name)
    for i in range(I.shape[0]):
        for j in range(I.shape[1]):
            if I[i, j]:
                inv_r[i, j] = 1.0 / inv_r[i, j]
    PE = G * np.sum(np.triu(-(mass * mass.T) * inv_r, 1))
    return KE, PE


def nbody_kernel(mass, pos, vel, N, Nt, dt, G, softening):
    vel -= (np.sum(mass * vel, axis=0) / vel.shape[0]) / np.mean(mass)
    acc = nbody_getAcc(pos, mass, G, softening)
    KE = np.empty(Nt + 1, dtype=np.float64)
    PE = np.empty(Nt + 1, dtype=np.float64)
    KE[0], PE[0] = nbody_getEnergy(pos, vel, mass, G)
    t = 0.0
    for i in range(Nt):
        vel += acc * dt / 2.0
        pos += vel * dt
        acc = nbody_getAcc(pos, mass, G, softening)
        vel += acc * dt / 2.0
        t += dt
        KE[i + 1], PE[i + 1] = nbody_getEnergy(pos, vel, mass, G)
    return KE, PE


def nbody_objective(mass, pos, vel, N, Nt, dt, G, softening):
    KE, PE = nbody_kernel(mass, pos.copy(), vel.copy(), N, Nt, dt, G, softening)
    return np.sum(KE) + np.sum(PE)


def init_nbody(N, tEnd, dt):
    g = rng()
    mass = 20.0 * np.ones((N, 1)) / N
    pos, vel = g.random((N, 3)), g.random((N, 3))
    return mass, pos, vel, N, int(np.ceil(tEnd / dt)), dt, 1.0, 0.1
