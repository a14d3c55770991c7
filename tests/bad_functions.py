"""Functions outside the supported subset; test_errors.py checks the errors point at them.

Each `# error:` comment marks the line the error must name.
"""

import numpy as np

SCALE = 2.0
TABLE = np.ones(3)


def uses_if(x):
    y = x
    if x > 0.0:  # error: if
        y = 2.0 * x
    return y


def uses_while(x):
    while x > 1.0:  # error: while
        x = x / 2.0
    return x


def uses_list_comprehension(x):
    s = sum([v * v for v in x])  # error: comprehension
    return s


def uses_unknown_function(x):
    return np.fft.fft(x)  # error: unknown function


def early_return(x):
    for i in range(3):
        return x  # error: return
    return x


def reads_global_array(x):
    return x * TABLE[0]  # error: global array


def uses_slice(x):
    y = x[1:]  # error: slice
    return y[0]


def writes_argument(x):
    x[0] = 1.0  # error: argument write
    return x[0]


def reads_loop_var_after_loop(x):
    s = 0.0
    for i in range(3):
        s += x
    return s * i  # error: loop variable


def mixed_indices(x):
    return x[0] + x[0, 1]  # error: indices


def returns_array(x):
    y = x.copy()
    return y


def reads_frozen_global(x):
    return SCALE * x


def loop_sum(x, n):
    s = 0.0
    for i in range(n):
        s += x[i]
    return s
