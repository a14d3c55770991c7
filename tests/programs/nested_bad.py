"""Derivative calls sourcead refuses, each at the user's line (tests/test_nested.py)."""

import numpy as np

import sourcead as ad


def cube(x):
    return np.sum(x * x * x)


cube_vjp = ad.vjp(cube, wrt=0, jit=False)
cube_grad = ad.grad(cube, wrt=0, jit=False)
cube_hvp = ad.hvp(cube, wrt=0, jit=False)


def product(x, y):
    return np.sum(x * y)


cube_grads = ad.grad(product, wrt=(0, 1), jit=False)


def calls_a_vjp(x):
    return np.sum(cube_vjp(x, cotangent=1.0)[1])


def calls_an_hvp(x):
    return np.sum(cube_hvp(x, tangents=x))


def calls_by_keyword(x):
    return np.sum(cube_grad(x=x))


def calls_a_tuple_of_gradients(x):
    return np.sum(cube_grads(x, x)[0])


def selfish(x):
    return np.sum(x * inner(x))


inner = cube_grad  # the test rebinds it to selfish's own gradient


def steps(x0, n):
    x = x0.copy()
    for _ in range(n):
        x = x - 0.1 * cube_grad(x)
    return np.sum(x * x)


def mixed_kinds(x):
    return np.sum(cube_grad(x)) + np.sum(cube_grad(x[:, 0]))
