"""Peers for ``benchmarks.suite``: JAX, PyTorch and autograd, each as it would be used idiomatically.

A peer is available when its import succeeds; ``available()`` returns the ones that do, with a
note for each that is missing. ``Peer.prepare(pair, args)`` gives a zero-argument callable that
computes the gradient of the pair's vectorized loss with respect to ``pair.wrt`` and returns it as
a tuple of NumPy values (floats or float64 arrays), everything in float64:

* JAX: ``jax.jit(jax.grad(f, argnums=wrt))``, with x64 enabled, integer arguments static, loops as
  ``lax.fori_loop`` / ``lax.scan``;
* PyTorch: eager mode, float64 tensors, ``torch.autograd.grad``; loops in Python;
* autograd (HIPS): ``autograd.grad`` over a tuple of the differentiated arguments; loops in Python.

Input conversion happens once, outside the timed callable; turning the results back into NumPy
arrays is inside it (a user who hands the gradient to SciPy pays it too).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from types import SimpleNamespace

import numpy as np


def _positions(pair) -> list[int]:
    params = list(inspect.signature(pair.loop).parameters)
    return [params.index(name) for name in pair.wrt]


def _python_loop(step: Callable, n: int, x):
    for _ in range(n):
        x = step(x)
    return x


def _python_scan(step: Callable, carry, xs):
    for x in xs:
        carry = step(carry, x)
    return carry


class Peer:
    name = ""
    module = ""

    def prepare(self, pair, args: tuple) -> Callable[[], tuple]:
        raise NotImplementedError

    def version(self) -> str:
        return importlib.import_module(self.module).__version__


class Jax(Peer):
    name, module = "JAX", "jax"

    def __init__(self):
        import jax

        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        from jax.scipy.special import logsumexp

        self.jax = jax
        self.ops = SimpleNamespace(
            exp=jnp.exp,
            log=jnp.log,
            sqrt=jnp.sqrt,
            tanh=jnp.tanh,
            sum=jnp.sum,
            mean=jnp.mean,
            softplus=lambda z: jnp.logaddexp(0.0, z),
            logsumexp=logsumexp,
            roll=jnp.roll,
            eye=jnp.eye,
            stack=jnp.stack,
            pad1=lambda a: jnp.pad(a, 1),
            repeat=lambda step, n, x: jax.lax.fori_loop(0, n, lambda _, c: step(c), x),
            scan=lambda step, carry, xs: jax.lax.scan(lambda c, x: (step(c, x), None), carry, xs)[0],
        )

    def prepare(self, pair, args):
        jax = self.jax
        static = [k for k, a in enumerate(args) if isinstance(a, int)]
        positions = _positions(pair)
        fn = jax.jit(jax.grad(lambda *a: pair.vec(self.ops, *a), argnums=tuple(positions)), static_argnums=static)
        device_args = [a if k in static else jax.numpy.asarray(a) for k, a in enumerate(args)]

        def call():
            return tuple(np.asarray(g) if np.ndim(g) else float(g) for g in fn(*device_args))

        return call


class Torch(Peer):
    name, module = "PyTorch", "torch"

    def __init__(self):
        import torch

        self.torch = torch
        self.ops = SimpleNamespace(
            exp=torch.exp,
            log=lambda z: torch.log(z) if isinstance(z, torch.Tensor) else np.log(z),
            sqrt=torch.sqrt,
            tanh=torch.tanh,
            sum=lambda a, axis=None: a.sum() if axis is None else a.sum(dim=axis),
            mean=torch.mean,
            softplus=torch.nn.functional.softplus,
            logsumexp=lambda a, axis: torch.logsumexp(a, dim=axis),
            roll=lambda a, k: torch.roll(a, k),
            eye=lambda n: torch.eye(n, dtype=torch.float64),
            stack=lambda xs, axis: torch.stack(xs, dim=axis),
            pad1=lambda a: torch.nn.functional.pad(a, (1, 1, 1, 1)),
            repeat=_python_loop,
            scan=_python_scan,
        )

    def prepare(self, pair, args):
        torch = self.torch
        positions = _positions(pair)
        tensors = []
        for k, a in enumerate(args):
            if isinstance(a, np.ndarray):
                tensors.append(torch.tensor(a, dtype=torch.float64, requires_grad=k in positions))
            elif isinstance(a, float) and k in positions:
                tensors.append(torch.tensor(a, dtype=torch.float64, requires_grad=True))
            else:
                tensors.append(a)
        inputs = [tensors[k] for k in positions]

        def call():
            loss = pair.vec(self.ops, *tensors)
            grads = torch.autograd.grad(loss, inputs)
            return tuple(g.numpy() if g.ndim else float(g) for g in grads)

        return call


class Autograd(Peer):
    name, module = "autograd", "autograd"

    def __init__(self):
        import autograd
        import autograd.numpy as anp
        from autograd.scipy.special import logsumexp

        self.autograd = autograd
        self.ops = SimpleNamespace(
            exp=anp.exp,
            log=anp.log,
            sqrt=anp.sqrt,
            tanh=anp.tanh,
            sum=anp.sum,
            mean=anp.mean,
            softplus=lambda z: anp.logaddexp(0.0, z),
            logsumexp=logsumexp,
            roll=anp.roll,
            eye=anp.eye,
            stack=anp.stack,
            pad1=lambda a: anp.pad(a, 1, mode="constant"),  # its vjp needs the mode spelled out
            repeat=_python_loop,
            scan=_python_scan,
        )

    def version(self):
        from importlib.metadata import version

        return version("autograd")

    def prepare(self, pair, args):
        positions = _positions(pair)

        def loss(wrt_values):
            full = list(args)
            for k, value in zip(positions, wrt_values, strict=True):
                full[k] = value
            return pair.vec(self.ops, *full)

        gradient = self.autograd.grad(loss)
        start = tuple(args[k] for k in positions)

        def call():
            return tuple(np.asarray(g) if np.ndim(g) else float(g) for g in gradient(start))

        return call


PEERS = {cls.name: cls for cls in (Jax, Torch, Autograd)}


def available() -> tuple[list[Peer], list[str]]:
    """The peers that import here, and a note for each one that does not."""
    peers, notes = [], []
    for cls in PEERS.values():
        try:
            peers.append(cls())
        except ImportError as exc:
            notes.append(f"{cls.name} skipped: not installed ({exc}); `pip install -e '.[bench]'` adds it.")
    return peers, notes
