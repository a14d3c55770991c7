"""NPBench's CFD kernels (Barba and Forsyth's "12 steps to Navier-Stokes"): lid-driven cavity and
periodic channel flow, as their numba versions are written (decorator removed), in our own words.
Both update u, v and p in place; the objectives copy them and sum what was written."""

from __future__ import annotations

import numpy as np


def cavity_build_up_b(b, rho, dt, u, v, dx, dy):
    b[1:-1, 1:-1] = rho * (
        1 / dt * ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx) + (v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy))
        - ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx)) ** 2
        - 2 * ((u[2:, 1:-1] - u[0:-2, 1:-1]) / (2 * dy) * (v[1:-1, 2:] - v[1:-1, 0:-2]) / (2 * dx))
        - ((v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy)) ** 2
    )


def cavity_pressure_poisson(nit, p, dx, dy, b):
    pn = np.empty_like(p)
    pn = p.copy()
    for q in range(nit):
        pn = p.copy()
        p[1:-1, 1:-1] = ((pn[1:-1, 2:] + pn[1:-1, 0:-2]) * dy**2 + (pn[2:, 1:-1] + pn[0:-2, 1:-1]) * dx**2) / (
            2 * (dx**2 + dy**2)
        ) - dx**2 * dy**2 / (2 * (dx**2 + dy**2)) * b[1:-1, 1:-1]
        p[:, -1] = p[:, -2]
        p[0, :] = p[1, :]
        p[:, 0] = p[:, 1]
        p[-1, :] = 0


def cavity_flow_kernel(nx, ny, nt, nit, u, v, dt, dx, dy, p, rho, nu):
    un = np.empty_like(u)
    vn = np.empty_like(v)
    b = np.zeros((ny, nx))
    for n in range(nt):
        un = u.copy()
        vn = v.copy()
        cavity_build_up_b(b, rho, dt, u, v, dx, dy)
        cavity_pressure_poisson(nit, p, dx, dy, b)
        u[1:-1, 1:-1] = (
            un[1:-1, 1:-1]
            - un[1:-1, 1:-1] * dt / dx * (un[1:-1, 1:-1] - un[1:-1, 0:-2])
            - vn[1:-1, 1:-1] * dt / dy * (un[1:-1, 1:-1] - un[0:-2, 1:-1])
            - dt / (2 * rho * dx) * (p[1:-1, 2:] - p[1:-1, 0:-2])
            + nu
            * (
                dt / dx**2 * (un[1:-1, 2:] - 2 * un[1:-1, 1:-1] + un[1:-1, 0:-2])
                + dt / dy**2 * (un[2:, 1:-1] - 2 * un[1:-1, 1:-1] + un[0:-2, 1:-1])
            )
        )
        v[1:-1, 1:-1] = (
            vn[1:-1, 1:-1]
            - un[1:-1, 1:-1] * dt / dx * (vn[1:-1, 1:-1] - vn[1:-1, 0:-2])
            - vn[1:-1, 1:-1] * dt / dy * (vn[1:-1, 1:-1] - vn[0:-2, 1:-1])
            - dt / (2 * rho * dy) * (p[2:, 1:-1] - p[0:-2, 1:-1])
            + nu
            * (
                dt / dx**2 * (vn[1:-1, 2:] - 2 * vn[1:-1, 1:-1] + vn[1:-1, 0:-2])
                + dt / dy**2 * (vn[2:, 1:-1] - 2 * vn[1:-1, 1:-1] + vn[0:-2, 1:-1])
            )
        )
        u[0, :] = 0
        u[:, 0] = 0
        u[:, -1] = 0
        u[-1, :] = 1
        v[0, :] = 0
        v[-1, :] = 0
        v[:, 0] = 0
        v[:, -1] = 0


def cavity_flow_objective(nx, ny, nt, nit, u, v, dt, dx, dy, p, rho, nu):
    u_out = u.copy()
    v_out = v.copy()
    p_out = p.copy()
    cavity_flow_kernel(nx, ny, nt, nit, u_out, v_out, dt, dx, dy, p_out, rho, nu)
    return np.sum(u_out) + np.sum(v_out) + np.sum(p_out)


def init_cavity_flow(ny, nx, nt, nit):
    # NPBench starts from rest (zeros); a small seeded perturbation keeps every path of the
    # derivative exercised (from zeros the products of velocities have zero derivative)
    g = np.random.default_rng(42)
    u, v, p = (0.01 * g.random((ny, nx)) for _ in range(3))
    dx, dy = 2.0 / (nx - 1), 2.0 / (ny - 1)
    return nx, ny, nt, nit, u, v, 0.1 / ((nx - 1) * (ny - 1)), dx, dy, p, 1.0, 0.1


def channel_build_up_b(rho, dt, dx, dy, u, v):
    b = np.zeros_like(u)
    b[1:-1, 1:-1] = rho * (
        1 / dt * ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx) + (v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy))
        - ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx)) ** 2
        - 2 * ((u[2:, 1:-1] - u[0:-2, 1:-1]) / (2 * dy) * (v[1:-1, 2:] - v[1:-1, 0:-2]) / (2 * dx))
        - ((v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy)) ** 2
    )
    b[1:-1, -1] = rho * (
        1 / dt * ((u[1:-1, 0] - u[1:-1, -2]) / (2 * dx) + (v[2:, -1] - v[0:-2, -1]) / (2 * dy))
        - ((u[1:-1, 0] - u[1:-1, -2]) / (2 * dx)) ** 2
        - 2 * ((u[2:, -1] - u[0:-2, -1]) / (2 * dy) * (v[1:-1, 0] - v[1:-1, -2]) / (2 * dx))
        - ((v[2:, -1] - v[0:-2, -1]) / (2 * dy)) ** 2
    )
    b[1:-1, 0] = rho * (
        1 / dt * ((u[1:-1, 1] - u[1:-1, -1]) / (2 * dx) + (v[2:, 0] - v[0:-2, 0]) / (2 * dy))
        - ((u[1:-1, 1] - u[1:-1, -1]) / (2 * dx)) ** 2
        - 2 * ((u[2:, 0] - u[0:-2, 0]) / (2 * dy) * (v[1:-1, 1] - v[1:-1, -1]) / (2 * dx))
        - ((v[2:, 0] - v[0:-2, 0]) / (2 * dy)) ** 2
    )
    return b


def channel_pressure_poisson_periodic(nit, p, dx, dy, b):
    pn = np.empty_like(p)
    for q in range(nit):
        pn = p.copy()
        p[1:-1, 1:-1] = ((pn[1:-1, 2:] + pn[1:-1, 0:-2]) * dy**2 + (pn[2:, 1:-1] + pn[0:-2, 1:-1]) * dx**2) / (
            2 * (dx**2 + dy**2)
        ) - dx**2 * dy**2 / (2 * (dx**2 + dy**2)) * b[1:-1, 1:-1]
        p[1:-1, -1] = ((pn[1:-1, 0] + pn[1:-1, -2]) * dy**2 + (pn[2:, -1] + pn[0:-2, -1]) * dx**2) / (
            2 * (dx**2 + dy**2)
        ) - dx**2 * dy**2 / (2 * (dx**2 + dy**2)) * b[1:-1, -1]
        p[1:-1, 0] = ((pn[1:-1, 1] + pn[1:-1, -1]) * dy**2 + (pn[2:, 0] + pn[0:-2, 0]) * dx**2) / (
            2 * (dx**2 + dy**2)
        ) - dx**2 * dy**2 / (2 * (dx**2 + dy**2)) * b[1:-1, 0]
        p[-1, :] = p[-2, :]
        p[0, :] = p[1, :]


def channel_flow_kernel(nit, u, v, dt, dx, dy, p, rho, nu, F):
    udiff = 1
    stepcount = 0
    while udiff > 0.001:
        un = u.copy()
        vn = v.copy()
        b = channel_build_up_b(rho, dt, dx, dy, u, v)
        channel_pressure_poisson_periodic(nit, p, dx, dy, b)
        u[1:-1, 1:-1] = (
            un[1:-1, 1:-1]
            - un[1:-1, 1:-1] * dt / dx * (un[1:-1, 1:-1] - un[1:-1, 0:-2])
            - vn[1:-1, 1:-1] * dt / dy * (un[1:-1, 1:-1] - un[0:-2, 1:-1])
            - dt / (2 * rho * dx) * (p[1:-1, 2:] - p[1:-1, 0:-2])
            + nu
            * (
                dt / dx**2 * (un[1:-1, 2:] - 2 * un[1:-1, 1:-1] + un[1:-1, 0:-2])
                + dt / dy**2 * (un[2:, 1:-1] - 2 * un[1:-1, 1:-1] + un[0:-2, 1:-1])
            )
            + F * dt
        )
        v[1:-1, 1:-1] = (
            vn[1:-1, 1:-1]
            - un[1:-1, 1:-1] * dt / dx * (vn[1:-1, 1:-1] - vn[1:-1, 0:-2])
            - vn[1:-1, 1:-1] * dt / dy * (vn[1:-1, 1:-1] - vn[0:-2, 1:-1])
            - dt / (2 * rho * dy) * (p[2:, 1:-1] - p[0:-2, 1:-1])
            + nu
            * (
                dt / dx**2 * (vn[1:-1, 2:] - 2 * vn[1:-1, 1:-1] + vn[1:-1, 0:-2])
                + dt / dy**2 * (vn[2:, 1:-1] - 2 * vn[1:-1, 1:-1] + vn[0:-2, 1:-1])
            )
        )
        u[1:-1, -1] = (
            un[1:-1, -1]
            - un[1:-1, -1] * dt / dx * (un[1:-1, -1] - un[1:-1, -2])
            - vn[1:-1, -1] * dt / dy * (un[1:-1, -1] - un[0:-2, -1])
            - dt / (2 * rho * dx) * (p[1:-1, 0] - p[1:-1, -2])
            + nu
            * (
                dt / dx**2 * (un[1:-1, 0] - 2 * un[1:-1, -1] + un[1:-1, -2])
                + dt / dy**2 * (un[2:, -1] - 2 * un[1:-1, -1] + un[0:-2, -1])
            )
            + F * dt
        )
        u[1:-1, 0] = (
            un[1:-1, 0]
            - un[1:-1, 0] * dt / dx * (un[1:-1, 0] - un[1:-1, -1])
            - vn[1:-1, 0] * dt / dy * (un[1:-1, 0] - un[0:-2, 0])
            - dt / (2 * rho * dx) * (p[1:-1, 1] - p[1:-1, -1])
            + nu
            * (
                dt / dx**2 * (un[1:-1, 1] - 2 * un[1:-1, 0] + un[1:-1, -1])
                + dt / dy**2 * (un[2:, 0] - 2 * un[1:-1, 0] + un[0:-2, 0])
            )
            + F * dt
        )
        v[1:-1, -1] = (
            vn[1:-1, -1]
            - un[1:-1, -1] * dt / dx * (vn[1:-1, -1] - vn[1:-1, -2])
            - vn[1:-1, -1] * dt / dy * (vn[1:-1, -1] - vn[0:-2, -1])
            - dt / (2 * rho * dy) * (p[2:, -1] - p[0:-2, -1])
            + nu
            * (
                dt / dx**2 * (vn[1:-1, 0] - 2 * vn[1:-1, -1] + vn[1:-1, -2])
                + dt / dy**2 * (vn[2:, -1] - 2 * vn[1:-1, -1] + vn[0:-2, -1])
            )
        )
        v[1:-1, 0] = (
            vn[1:-1, 0]
            - un[1:-1, 0] * dt / dx * (vn[1:-1, 0] - vn[1:-1, -1])
            - vn[1:-1, 0] * dt / dy * (vn[1:-1, 0] - vn[0:-2, 0])
            - dt / (2 * rho * dy) * (p[2:, 0] - p[0:-2, 0])
            + nu
            * (
                dt / dx**2 * (vn[1:-1, 1] - 2 * vn[1:-1, 0] + vn[1:-1, -1])
                + dt / dy**2 * (vn[2:, 0] - 2 * vn[1:-1, 0] + vn[0:-2, 0])
            )
        )
        u[0, :] = 0
        u[-1, :] = 0
        v[0, :] = 0
        v[-1, :] = 0
        udiff = (np.sum(u) - np.sum(un)) / np.sum(u)
        stepcount += 1
    return stepcount


def channel_flow_objective(nit, u, v, dt, dx, dy, p, rho, nu, F):
    u_out = u.copy()
    v_out = v.copy()
    p_out = p.copy()
    channel_flow_kernel(nit, u_out, v_out, dt, dx, dy, p_out, rho, nu, F)
    return np.sum(u_out) + np.sum(v_out) + np.sum(p_out)


def init_channel_flow(ny, nx, nit):
    g = np.random.default_rng(42)
    u, v = (0.01 * g.random((ny, nx)) for _ in range(2))
    p = np.ones((ny, nx))
    dx, dy = 2.0 / (nx - 1), 2.0 / (ny - 1)
    return nit, u, v, 0.1 / ((nx - 1) * (ny - 1)), dx, dy, p, 1.0, 0.1, 1.0
