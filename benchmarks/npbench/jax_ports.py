"""JAX versions of the NPBench kernels sourcead differentiates, for ``jit(grad)`` in the bench.

Written in our own words from NPBench's ``*_jax.py`` (loops as ``lax.fori_loop``, the slices of
a loop-dependent length as masks over the whole row, in-place writes as ``.at[].set``).
``port(name, args)`` gives ``(f, arrays)``: ``f(*arrays)`` is the same objective as the
registry's (the sum of what the kernel returns or writes) as a function of the float arrays the
gradient is taken with respect to, the other arguments closed over; or a string saying why there
is no port. JAX is imported inside: import this module only in the JAX child process.
"""

from __future__ import annotations


def port(name: str, args: tuple):
    import jax.numpy as jnp

    made = _port(name, args)
    if isinstance(made, str):
        return made
    f, arrays = made
    return f, tuple(jnp.asarray(a) for a in arrays)


def _port(name: str, args: tuple):  # noqa: C901 (one branch per kernel, each a few lines)
    import jax
    import jax.numpy as jnp
    from jax import lax

    jax.config.update("jax_enable_x64", True)
    fori = lax.fori_loop
    s = jnp.sum

    def below(n, i):
        return jnp.arange(n) < i

    if name == "atax":
        return (lambda A, x: s((A @ x) @ A)), args
    if name == "bicg":
        return (lambda A, p, r: s(r @ A) + s(A @ p)), args
    if name == "gemm":
        alpha, beta, C, A, B = args
        return (lambda C, A, B: s(alpha * A @ B + beta * C)), (C, A, B)
    if name == "gemver":
        alpha, beta, A, u1, v1, u2, v2, w, x, y, z = args

        def gemver(A, u1, v1, u2, v2, w, x, y, z):
            A = A + jnp.outer(u1, v1) + jnp.outer(u2, v2)
            x = x + beta * y @ A + z
            w = w + alpha * A @ x
            return s(A) + s(w) + s(x)

        return gemver, args[2:]
    if name == "gesummv":
        alpha, beta, A, B, x = args
        return (lambda A, B, x: s(alpha * A @ x + beta * B @ x)), (A, B, x)
    if name == "k2mm":
        alpha, beta = args[:2]
        return (lambda A, B, C, D: s(alpha * A @ B @ C + beta * D)), args[2:]
    if name == "k3mm":
        return (lambda A, B, C, D: s(A @ B @ C @ D)), args
    if name == "mvt":
        return (lambda x1, x2, y_1, y_2, A: s(x1 + A @ y_1) + s(x2 + y_2 @ A)), args
    if name == "doitgen":
        return (lambda A, C4: s(A @ C4)), args[3:]
    if name in ("syrk", "syr2k"):
        alpha, beta = args[:2]

        def rank_k(C, A, B=None):
            B = A if B is None else B
            n, m = A.shape

            def row(i, C):
                keep = jnp.arange(n) < i + 1
                C = C.at[i, :].set(jnp.where(keep, C[i, :] * beta, C[i, :]))

                def term(k, C):
                    if name == "syrk":
                        upd = alpha * A[i, k] * A[:, k]
                    else:
                        upd = A[:, k] * alpha * B[i, k] + B[:, k] * alpha * A[i, k]
                    return C.at[i, :].add(jnp.where(keep, upd, 0.0))

                return fori(0, m, term, C)

            return s(fori(0, n, row, C))

        return rank_k, args[2:]
    if name == "trmm":
        alpha = args[0]
        return (lambda A, B: s(alpha * (B + jnp.tril(A, -1).T @ B))), args[1:]
    if name == "cholesky":

        def cholesky(A):
            n = A.shape[0]
            A = A.at[0, 0].set(jnp.sqrt(A[0, 0]))

            def row(i, A):
                def col(j, A):
                    d = jnp.where(below(n, j), A[i, :] * A[j, :], 0.0).sum()
                    return A.at[i, j].set((A[i, j] - d) / A[j, j])

                A = fori(0, i, col, A)
                d = jnp.where(below(n, i), A[i, :] * A[i, :], 0.0).sum()
                return A.at[i, i].set(jnp.sqrt(A[i, i] - d))

            return s(fori(1, n, row, A))

        return cholesky, args
    if name in ("lu", "ludcmp"):

        def factor(A):
            n = A.shape[0]

            def row(i, A):
                def lower(j, A):
                    d = jnp.where(below(n, j), A[i, :] * A[:, j], 0.0).sum()
                    return A.at[i, j].set((A[i, j] - d) / A[j, j])

                def upper(j, A):
                    d = jnp.where(below(n, i), A[i, :] * A[:, j], 0.0).sum()
                    return A.at[i, j].set(A[i, j] - d)

                return fori(i, n, upper, fori(0, i, lower, A))

            return fori(0, n, row, A)

        if name == "lu":
            return (lambda A: s(factor(A))), args

        def ludcmp(A, b):
            A = factor(A)
            n = A.shape[0]
            y = fori(0, n, lambda i, y: y.at[i].set(b[i] - jnp.where(below(n, i), A[i, :] * y, 0.0).sum()), b * 0)

            def back(t, x):
                i = n - 1 - t
                d = jnp.where(jnp.arange(n) > i, A[i, :] * x, 0.0).sum()
                return x.at[i].set((y[i] - d) / A[i, i])

            x = fori(0, n, back, b * 0)
            return s(x) + s(y) + s(A)

        return ludcmp, args
    if name == "trisolv":

        def trisolv(L, x, b):
            n = x.shape[0]
            step = lambda i, x: x.at[i].set((b[i] - jnp.where(below(n, i), L[i, :] * x, 0.0).sum()) / L[i, i])  # noqa: E731
            return s(fori(0, n, step, x))

        return trisolv, args
    if name in ("jacobi_1d", "jacobi_2d", "heat_3d"):
        steps = args[0]

        def smooth(X):
            if X.ndim == 1:
                return 0.33333 * (X[:-2] + X[1:-1] + X[2:])
            if X.ndim == 2:
                return 0.2 * (X[1:-1, 1:-1] + X[1:-1, :-2] + X[1:-1, 2:] + X[2:, 1:-1] + X[:-2, 1:-1])
            c = X[1:-1, 1:-1, 1:-1]
            return (
                0.125 * (X[2:, 1:-1, 1:-1] - 2.0 * c + X[:-2, 1:-1, 1:-1])
                + 0.125 * (X[1:-1, 2:, 1:-1] - 2.0 * c + X[1:-1, :-2, 1:-1])
                + 0.125 * (X[1:-1, 1:-1, 2:] - 2.0 * c + X[1:-1, 1:-1, :-2])
                + c
            )

        def inner(X):
            return tuple(slice(1, -1) for _ in range(X.ndim))

        def two_buffers(A, B):
            def step(t, AB):
                A, B = AB
                B = B.at[inner(B)].set(smooth(A))
                return A.at[inner(A)].set(smooth(B)), B

            A, B = fori(1, steps, step, (A, B))
            return s(A) + s(B)

        return two_buffers, args[1:]
    if name == "seidel_2d":
        steps, n = args[:2]

        def seidel(A):
            def sweep(t, A):
                def row(i, A):
                    A = A.at[i, 1:-1].add(
                        A[i - 1, :-2]
                        + A[i - 1, 1:-1]
                        + A[i - 1, 2:]
                        + A[i, 2:]
                        + A[i + 1, :-2]
                        + A[i + 1, 1:-1]
                        + A[i + 1, 2:]
                    )
                    return fori(1, n - 1, lambda j, A: A.at[i, j].set((A[i, j] + A[i, j - 1]) / 9.0), A)

                return fori(1, n - 1, row, A)

            return s(fori(0, steps - 1, sweep, A))

        return seidel, args[2:]
    if name == "fdtd_2d":
        tmax = args[0]

        def fdtd(ex, ey, hz, fict):
            def step(t, fields):
                ex, ey, hz = fields
                ey = ey.at[0, :].set(fict[t])
                ey = ey.at[1:, :].add(-0.5 * (hz[1:, :] - hz[:-1, :]))
                ex = ex.at[:, 1:].add(-0.5 * (hz[:, 1:] - hz[:, :-1]))
                hz = hz.at[:-1, :-1].add(-0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1]))
                return ex, ey, hz

            ex, ey, hz = fori(0, tmax, step, (ex, ey, hz))
            return s(ex) + s(ey) + s(hz)

        return fdtd, args[1:]
    if name == "arc_distance":

        def arc(t1, p1, t2, p2):
            tmp = jnp.sin((t2 - t1) / 2) ** 2 + jnp.cos(t1) * jnp.cos(t2) * jnp.sin((p2 - p1) / 2) ** 2
            return s(2 * jnp.arctan2(jnp.sqrt(tmp), jnp.sqrt(1 - tmp)))

        return arc, args
    if name == "go_fast":
        return (lambda a: s(a + jnp.sum(jnp.tanh(jnp.diagonal(a))))), args
    if name == "cavity_flow":
        return cavity(args, jnp, fori)
    if name in ("covariance", "covariance2", "correlation"):
        return statistics(name, args, jnp)
    if name == "spmv":  # the rows' products summed by segment: one gather and one scatter
        import numpy as np

        A_row, A_col, A_val, x = args
        rows = np.repeat(np.arange(A_row.size - 1), np.diff(A_row))
        count = A_row.size - 1
        return (lambda v, x: s(jax.ops.segment_sum(v * x[A_col], rows, num_segments=count))), (A_val, x)
    if name == "cholesky2":
        # NumPy's cholesky reads the lower triangle; JAX's derivative assumes a symmetric tangent,
        # so the port factors the symmetric matrix that triangle stands for
        factor = lambda A: jnp.linalg.cholesky(jnp.tril(A) + jnp.tril(A, -1).T)  # noqa: E731
        return (lambda A: s(factor(A) + jnp.triu(A, 1))), args
    return "no JAX port written"


def statistics(name: str, args: tuple, jnp):
    """covariance (loops, and np.cov) and correlation: the products of the centred (and, for
    correlation, scaled) columns as one matrix product; correlation's diagonal is 1."""
    M, float_n, data = args

    def centred(d):
        return d - jnp.sum(d, axis=0) / float_n

    if name != "correlation":
        return (lambda d: jnp.sum(centred(d).T @ centred(d)) / (float_n - 1.0)), (data,)

    def correlation(d):
        c = centred(d)
        stddev = jnp.sqrt(jnp.sum(c**2, axis=0) / float_n)
        z = c / (jnp.sqrt(float_n) * jnp.where(stddev <= 0.1, 1.0, stddev))
        product = z.T @ z
        return M + jnp.sum(product) - jnp.trace(product)

    return correlation, (data,)


def cavity(args, jnp, fori):
    """cavity_flow: the time loop and the pressure iterations as fori_loops over whole arrays."""
    nx, ny, nt, nit, u, v, dt, dx, dy, p, rho, nu = args
    c = slice(1, -1)

    def flow(u, v, p):
        def time_step(n, state):
            u, v, p = state
            un, vn = u, v
            du_dx = (u[c, 2:] - u[c, :-2]) / (2 * dx)
            dv_dy = (v[2:, c] - v[:-2, c]) / (2 * dy)
            du_dy = (u[2:, c] - u[:-2, c]) / (2 * dy)
            dv_dx = (v[c, 2:] - v[c, :-2]) / (2 * dx)
            b = (
                jnp.zeros((ny, nx))
                .at[c, c]
                .set(rho * (1 / dt * (du_dx + dv_dy) - du_dx**2 - 2 * du_dy * dv_dx - dv_dy**2))
            )

            def poisson(q, p):
                pn = p
                inner = ((pn[c, 2:] + pn[c, :-2]) * dy**2 + (pn[2:, c] + pn[:-2, c]) * dx**2) / (2 * (dx**2 + dy**2))
                p = p.at[c, c].set(inner - dx**2 * dy**2 / (2 * (dx**2 + dy**2)) * b[c, c])
                p = p.at[:, -1].set(p[:, -2])
                p = p.at[0, :].set(p[1, :])
                p = p.at[:, 0].set(p[:, 1])
                return p.at[-1, :].set(0.0)

            p = fori(0, nit, poisson, p)

            def advance(w, rho_d, dp):
                return (
                    w[c, c]
                    - un[c, c] * dt / dx * (w[c, c] - w[c, :-2])
                    - vn[c, c] * dt / dy * (w[c, c] - w[:-2, c])
                    - dt / (2 * rho * rho_d) * dp
                    + nu
                    * (
                        dt / dx**2 * (w[c, 2:] - 2 * w[c, c] + w[c, :-2])
                        + dt / dy**2 * (w[2:, c] - 2 * w[c, c] + w[:-2, c])
                    )
                )

            u = u.at[c, c].set(advance(un, dx, p[c, 2:] - p[c, :-2]))
            v = v.at[c, c].set(advance(vn, dy, p[2:, c] - p[:-2, c]))
            u = u.at[0, :].set(0.0).at[:, 0].set(0.0).at[:, -1].set(0.0).at[-1, :].set(1.0)
            v = v.at[0, :].set(0.0).at[-1, :].set(0.0).at[:, 0].set(0.0).at[:, -1].set(0.0)
            return u, v, p

        u, v, p = fori(0, nt, time_step, (u, v, p))
        return jnp.sum(u) + jnp.sum(v) + jnp.sum(p)

    return flow, (u, v, p)
