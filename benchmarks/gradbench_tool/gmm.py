"""GradBench's ``gmm`` (ADBench's Gaussian mixture): the log-likelihood of n points x under k
Gaussians with weights softmax(alpha), means mu and inverse-covariance factors Q_k (diagonal
exp(q_k), strictly lower part l_k, column by column), plus a Wishart prior (gamma, m) on Q_k.
``objective`` is that number; ``jacobian`` its gradient as ``{alpha, mu, q, l}``.

The terms that depend on neither parameters nor data (-n d/2 log 2pi and k times the Wishart
normaliser, with its log-gamma) are one number, computed when the input is decoded."""

from __future__ import annotations

import math

import numpy as np

import sourcead
from benchmarks.gradbench_tool.common import Function, as_list, number, primal, vector

TINY = {
    "d": 2,
    "k": 2,
    "n": 3,
    "x": [[0.1, -0.4], [0.7, 0.2], [-0.3, 0.5]],
    "m": 1,
    "gamma": 1.5,
    "alpha": [0.2, -0.1],
    "mu": [[0.3, 0.1], [-0.2, 0.4]],
    "q": [[0.1, -0.2], [0.3, 0.05]],
    "l": [[0.4], [-0.3]],
    "min_runs": 1,
    "min_seconds": 0.0,
}


def gmm_objective(alpha, mu, q, lower, x, gamma, m, constant):
    n = x.shape[0]
    d = x.shape[1]
    k = alpha.shape[0]
    main = np.empty(k)
    total = 0.0
    for i in range(n):
        for j in range(k):
            sum_q = 0.0
            sq = 0.0
            for r in range(d):
                sum_q += q[j, r]
                s = math.exp(q[j, r]) * (x[i, r] - mu[j, r])
                for c in range(r):
                    s += lower[j, c * (2 * d - c - 1) // 2 + r - c - 1] * (x[i, c] - mu[j, c])
                sq += s * s
            main[j] = alpha[j] + sum_q - 0.5 * sq
        top = main[0]
        for j in range(1, k):
            if main[j] > top:
                top = main[j]
        acc = 0.0
        for j in range(k):
            acc += math.exp(main[j] - top)
        total += math.log(acc) + top
    top = alpha[0]
    for j in range(1, k):
        if alpha[j] > top:
            top = alpha[j]
    acc = 0.0
    for j in range(k):
        acc += math.exp(alpha[j] - top)
    total -= n * (math.log(acc) + top)
    prior = 0.0
    for j in range(k):
        frobenius = 0.0
        sum_q = 0.0
        for r in range(d):
            e = math.exp(q[j, r])
            frobenius += e * e
            sum_q += q[j, r]
        for c in range(lower.shape[1]):
            frobenius += lower[j, c] * lower[j, c]
        prior += 0.5 * gamma * gamma * frobenius - m * sum_q
    return total - prior + constant


def constant_terms(d: int, k: int, n: int, gamma: float, m: int) -> float:
    dof = d + m + 1
    log_gamma = 0.25 * d * (d - 1) * math.log(math.pi)
    for j in range(1, d + 1):
        log_gamma += math.lgamma(0.5 * dof + 0.5 * (1 - j))
    wishart = dof * d * (math.log(gamma) - 0.5 * math.log(2.0)) - log_gamma
    return -n * d * 0.5 * math.log(2.0 * math.pi) + k * wishart


def decode(raw):
    d, k, n = int(raw["d"]), int(raw["k"]), int(raw["n"])
    gamma, m = float(raw["gamma"]), int(raw["m"])
    mu, q, x = vector(raw["mu"]), vector(raw["q"]), vector(raw["x"])
    lower = vector(raw["l"]).reshape(k, d * (d - 1) // 2)  # d = 1: k empty rows
    return vector(raw["alpha"]), mu, q, lower, x, gamma, float(m), constant_terms(d, k, n, gamma, m)


def encode_jacobian(grads):
    alpha, mu, q, lower = grads
    return {"alpha": as_list(alpha), "mu": as_list(mu), "q": as_list(q), "l": as_list(lower)}


PARAMETERS = ("alpha", "mu", "q", "lower")


def define(jit: bool) -> dict[str, Function]:
    return {
        "objective": Function(decode, primal(gmm_objective, jit), number),
        "jacobian": Function(decode, sourcead.grad(gmm_objective, wrt=PARAMETERS, jit=jit), encode_jacobian),
    }
