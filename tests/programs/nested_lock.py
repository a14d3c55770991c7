"""A derivative call whose inner object is prepared by another thread at the same time
(tests/test_nested.py): used by that one test only, so that nothing is built before it runs."""

import numpy as np

import sourcead as ad


def energy(x, q):
    return q * np.sum(x * x * x)


force = ad.grad(energy, wrt=0)


def pull(x, q):
    return np.sum(force(x, q) * x)
