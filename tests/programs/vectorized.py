"""Whole-array NumPy: elementwise arithmetic and functions with broadcasting, and full reductions."""

import math

import numpy as np


def gaussian_loglik(x, mu, sigma):
    z = (x - mu) / sigma
    return np.sum(-0.5 * z * z) - x.size * math.log(sigma) - 0.5 * x.size * math.log(2.0 * math.pi)


def logsumexp(x):
    m = np.max(x)
    return m + math.log(np.sum(np.exp(x - m)))


def softplus_mean(x, w, b):
    # broadcasting a 1-D w over the rows of a 2-D x, a float b
    h = np.log1p(np.exp(x * w + b))
    return np.mean(h)


def centered_squares(x):
    d = x - x.mean()
    return (d * d).sum() + np.min(x) * 0.5


def elementwise_map(x, y):
    # an array result: vjp/jvp
    return np.tanh(x) * y + np.sqrt(y * y + 1.0)


def least_squares(A, x, b):
    r = A @ x - b
    return 0.5 * np.sum(r * r)


def mlp_layer(W, x, b, v):
    h = np.tanh(W @ x + b)
    return np.dot(v, h)


def logistic_regression(w, X, y):
    z = X @ w
    return np.mean(np.log1p(np.exp(-y * z)))


def relu_norm(x, t):
    # np.maximum on arrays (a kink away from the sample points), and np.abs
    return np.sum(np.maximum(x - t, 0.0) ** 2) + np.sum(np.abs(x))


def softmax_cross_entropy(logits, label):
    # -log softmax(logits)[label], stable
    m = np.max(logits)
    return m + math.log(np.sum(np.exp(logits - m))) - logits[label]


def finite_differences(x, h):
    d = (x[1:] - x[:-1]) / h
    return np.sum(d * d)


def slice_update(x):
    y = np.zeros_like(x)
    y[1:-1] = x[2:] - 2.0 * x[1:-1] + x[:-2]
    y[::2] += 0.5 * x[::2]
    return np.sum(y**2)


def column_products(A, v):
    s = 0.0
    for j in range(A.shape[1]):
        s += np.dot(A[:, j], v) ** 2
    return s


def linear_algebra_mix(A, x, y):
    # transposes, an outer product, a norm, a cumulative sum and a product
    B = A.T @ A + np.outer(x, x)
    c = np.cumsum(x * y)
    return np.linalg.norm(B @ y) + np.sum(c * c) + np.prod(np.tanh(y) + 2.0)


def axis_reductions(X, w):
    # sums and means over an axis, broadcast back; constant arrays from np.ones / np.linspace
    col = np.mean(X, axis=0) * w
    row = X.sum(axis=1)
    ramp = np.linspace(0.0, 1.0, X.shape[0])
    return np.sum(col * col) + np.sum(row * ramp * np.ones(X.shape[0])) + np.sum(np.sum(X * X, axis=1))


def selections(x, lo, y):
    # np.where on a condition of the data, np.clip with an active bound
    z = np.where(x > 0.2, x * y, np.sin(x))
    return np.sum(z * z) + np.sum(np.clip(x, lo, 0.9) ** 2)


def reshaped(x, W):
    # a vector viewed as a matrix, and a product reduced with x.prod()
    M = x.reshape(3, 2)
    return np.sum(W @ M) + (np.tanh(x) + 2.0).prod()


def softplus_regression(w, X, y, lam):
    # a mean over an expression of two different arrays (y and X @ w)
    z = X @ w
    return np.mean(np.log1p(np.exp(z)) - y * z) + 0.5 * lam * np.sum(w * w)
