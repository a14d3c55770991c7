"""Issue 40: two sourcead bugs NPBench's ports found, each as a small program (the comment above
each says what went wrong); `tests/test_npbench_found.py` checks them against finite differences
and by the dot-product test, with and without numba, and that the true second names stay refused."""

from __future__ import annotations

import numpy as np

# --- channel_flow: a helper's fresh result, built in place, named by the caller in a loop -------
# `b = _build_up_b(u, c)` in a loop was refused as a second name for an argument: the inlined
# helper's local `b` is written in place, and the next iteration's writes to it were taken for
# writes to the caller's `b` (the helper returns a new np.zeros_like array)


def _build_up_b(u, c):
    b = np.zeros_like(u)
    b[1:-1] = c * (u[2:] - u[:-2])
    b[0] = u[1] * u[0]
    return b


def fresh_result_in_loop(u, p, c):
    for it in range(3):
        un = u.copy()
        b = _build_up_b(u, c)
        p[1:-1] = p[1:-1] + b[1:-1] * p[:-2]
        u[1:-1] = un[1:-1] - 0.1 * p[1:-1]
    return np.sum(u) + np.sum(p * p)


def fresh_result_in_while(u, p, c):  # channel_flow's loop is a while loop
    k = 0
    while k < 3:
        un = u.copy()
        b = _build_up_b(u, c)
        p[1:-1] = p[1:-1] + b[1:-1] * p[:-2]
        u[1:-1] = un[1:-1] - 0.1 * p[1:-1]
        k += 1
    return np.sum(u) + np.sum(p * p)


def own_name_dead_after_rename(u, p):  # the same without a helper: `a` is read nowhere after `b = a`
    for it in range(3):
        a = np.zeros_like(u)
        a[1:] = u[:-1] * p[1:]
        b = a
        p[1:] = p[1:] + b[1:] * p[:-1]
    return np.sum(p * p)


# true second names: still refused


def _same(u):
    u[0] = 2.0 * u[0]
    return u


def _tail(u):
    t = u[1:]  # refused (the view)
    return t


def returns_its_argument_in_loop(u, p):
    a = u.copy()
    for it in range(3):
        b = _same(a)  # refused
        p[1:] = p[1:] + b[1:] * p[:-1]
        a[0] = p[0]
    return np.sum(p) + np.sum(a)


def returns_a_view_in_loop(u, p):
    a = u.copy()
    for it in range(3):
        b = _tail(a)
        p[1:] = p[1:] + b * p[:-1]
        a[1] = p[0] * a[1]
    return np.sum(p) + np.sum(a)


def own_name_read_after_rename(u, p):
    for it in range(3):
        a = np.zeros_like(u)
        a[1:] = u[:-1] * p[1:]
        b = a  # refused
        p[1:] = p[1:] + b[1:] * a[:-1]
    return np.sum(p)


# --- hdiff: a temporary rebound with another shape ------------------------------------------------
# hdiff's `res = lap[1:, ...] - lap[:-1, ...]; flx = np.where(..., 0, res)`, then `res` again with
# another shape: the adjoint of the second `res` reset `res_bar` to zeros shaped like itself, and
# the first `res`'s adjoint then raised a broadcast error ((3,5,2) vs (4,4,2) in hdiff)


def hdiff_like(in_field, coeff):
    ni, nj = coeff.shape[0], coeff.shape[1]
    lap = 4.0 * in_field[1 : ni + 3, 1 : nj + 3, :] - (
        in_field[2 : ni + 4, 1 : nj + 3, :]
        + in_field[0 : ni + 2, 1 : nj + 3, :]
        + in_field[1 : ni + 3, 2 : nj + 4, :]
        + in_field[1 : ni + 3, 0 : nj + 2, :]
    )
    res = lap[1:, 1 : nj + 1, :] - lap[:-1, 1 : nj + 1, :]
    flx = np.where((res * (in_field[2 : ni + 3, 2 : nj + 2, :] - in_field[1 : ni + 2, 2 : nj + 2, :])) > 0, 0, res)
    res = lap[1 : ni + 1, 1:, :] - lap[1 : ni + 1, :-1, :]
    fly = np.where((res * (in_field[2 : ni + 2, 2 : nj + 3, :] - in_field[2 : ni + 2, 1 : nj + 2, :])) > 0, 0, res)
    out = in_field[2 : ni + 2, 2 : nj + 2, :] - coeff * (
        flx[1:, :, :] - flx[:-1, :, :] + fly[:, 1:, :] - fly[:, :-1, :]
    )
    return np.sum(out * out)


def rebound_linear(a):  # the same where nothing records the first `res` (only linear reads of it)
    res = a[1:, :] - a[:-1, :]
    f = 2.0 * res
    res = a[:, 1:] - a[:, :-1]
    g = 3.0 * res
    return np.sum(f * f) + np.sum(g)


# --- nbody: a bool array rebound in a loop, read by a later loop's branches ----------------------
# the record of the mask's old value put its shape and then its values on the int tape; the
# reverse sweep popped the shape first, so read the values as the shape (nbody: broadcast of
# (4,1) vs (4,0) in its generated gradient)


def mask_rebound_in_loop(x, w):
    s = 0.0
    for t in range(3):
        r = x * w + 0.1 * t
        mask = r > 0.6
        for i in range(mask.shape[0]):
            if mask[i]:
                r[i] = r[i] ** 2
        s += np.sum(r * w)
        x = np.sin(r)
    return s
