"""PyTorch bridge: a sourcead derivative as the backward of a `torch.autograd.Function`.

    import sourcead.torch
    loss = sourcead.torch.function(f, wrt=(0, 1))   # call it on CPU float64 tensors
    y = loss(w, b, X, n)                             # a tensor; y.backward() runs the adjoint

Arguments: tensors (a 0-d tensor is a float, or an int for an integer tensor), Python floats and
ints, NumPy arrays. Results have f's structure as tensors: a float is a 0-d float64 tensor, an
array a float64 tensor, a tuple a tuple of them. Gradients flow to the `wrt` arguments; only those
whose tensors require grad get adjoint work (a `vjp` prepared for just that subset), and a call
where none does runs the compiled primal alone. A tensor that requires grad but is not in `wrt` is
refused, rather than silently treated as a constant. `wrt` tensors must be CPU float64.

For a float-valued f (a loss), the forward pass runs the adjoint at once with seed 1.0 and the
backward pass scales the saved gradient by the incoming one (f's gradient is linear in the seed),
so a training step costs one forward sweep and one reverse sweep. For array or tuple results the
forward pass runs the primal and the backward pass the `vjp` with the incoming gradients. The
backward is not itself differentiable (`once_differentiable`).

`import sourcead` does not import torch; this module does, and says which extra to install when
torch is missing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..api.pickling import function_ref, resolve
from ..api.protocol import Wrt
from ..errors import SourceADError
from .common import Bridge, check_options, missing

try:
    import torch
except ImportError:
    raise missing("torch", "torch") from None

__all__ = ["TorchFunction", "function"]


def function(f: Callable, wrt: Wrt = 0, *, jit: bool = True) -> TorchFunction:
    """`f` as a callable on torch tensors whose backward is sourcead's generated adjoint."""
    return TorchFunction(f, wrt, jit)


class TorchFunction:
    """A prepared bridge: call it like `f`, on tensors; immutable and thread-safe like `grad`."""

    def __init__(self, f: Callable, wrt: Wrt = 0, jit: bool = True):
        self._bridge = Bridge(f, wrt, jit, "torch")
        self.__wrapped__ = self._bridge.func
        self.__name__ = self._bridge.name

    def __call__(self, *args: Any) -> Any:
        bridge = self._bridge
        bridge.check_arity(args)
        wanted = []
        for k, arg in enumerate(args):
            if not isinstance(arg, torch.Tensor):
                continue
            name = bridge.params[k]
            if arg.device.type != "cpu":
                raise SourceADError(f"argument `{name}` of {bridge.name} is on {arg.device}; pass a CPU tensor")
            if k in bridge.wrt_pos:
                if arg.dtype != torch.float64:
                    raise SourceADError(
                        f"argument `{name}` of {bridge.name} is a {arg.dtype} tensor; sourcead differentiates "
                        "float64 only",
                        hint=f"Pass {name}.double().",
                    )
                if arg.requires_grad:
                    wanted.append(k)
            elif arg.requires_grad:
                raise SourceADError(
                    f"argument `{name}` of {bridge.name} requires grad, but it is not in wrt="
                    f"{bridge.wrt_names[0] if bridge.single else bridge.wrt_names}: no gradient would reach it",
                    hint=f"Add it to wrt, or pass {name}.detach().",
                )
        return _Apply.apply(self, tuple(wanted) if torch.is_grad_enabled() else (), *args)

    def __reduce__(self) -> tuple:
        """Pickles as the recipe (function by module and name, wrt), like prepared derivatives."""
        b = self._bridge
        return rebuild, (
            function_ref(b.func),
            b.wrt_names[0] if b.single else b.wrt_names,
            {"jit": b.jit},
        )

    def __repr__(self) -> str:
        return f"sourcead.torch.function({self._bridge.name}, wrt={self._bridge.wrt_names})"


def _to_numpy(arg: Any) -> Any:
    if not isinstance(arg, torch.Tensor):
        return arg
    value = arg.detach().numpy()  # shares memory: sourcead never writes into its arguments here
    if value.ndim == 0:
        return value.item()  # a float, an int or a bool, as the function's parameter takes it
    return value


def _to_tensor(value: Any, inputs: list) -> Any:
    if isinstance(value, tuple):
        return tuple(_to_tensor(v, inputs) for v in value)
    if isinstance(value, np.ndarray):
        if any(isinstance(a, np.ndarray) and np.may_share_memory(value, a) for a in inputs):
            value = value.copy()  # a result that is an argument: never alias an input tensor
        return torch.from_numpy(value)
    return torch.tensor(float(value), dtype=torch.float64)


def _seed(grad_output: Any) -> Any:
    value = grad_output.detach().numpy()
    return float(value) if value.ndim == 0 else value


class _Apply(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, fn: TorchFunction, wanted: tuple[int, ...], *args: Any) -> Any:
        bridge = fn._bridge
        inputs = [_to_numpy(a) for a in args]
        ctx.wanted, ctx.n_args = wanted, len(args)
        ctx.shapes = {k: (args[k].shape if isinstance(args[k], torch.Tensor) else None) for k in wanted}
        if not wanted:
            return _to_tensor(bridge.primal(*inputs), inputs)
        vjp = bridge.vjp(wanted)
        if bridge.scalar_result(inputs):
            # a float result: its gradient is linear in the seed, so run the adjoint now, once
            value, grads = vjp(*inputs, cotangent=1.0)
            ctx.grads = grads
            ctx.inputs = None
            return _to_tensor(value, inputs)
        ctx.grads = None
        ctx.inputs, ctx.vjp, ctx.output_is_tuple = inputs, vjp, bridge.output_is_tuple
        ctx.save_for_backward(*(a for a in args if isinstance(a, torch.Tensor)))  # in-place edits are caught
        return _to_tensor(bridge.primal(*inputs), inputs)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        fn_grads: list[Any] = [None] * ctx.n_args
        if ctx.grads is not None:
            scale = float(grad_outputs[0])
            for k, g in zip(ctx.wanted, ctx.grads, strict=True):
                fn_grads[k] = _grad_tensor(scale * g, ctx.shapes[k])
        else:
            ctx.saved_tensors  # noqa: B018 - raises if an input was modified in place since forward
            seeds = tuple(_seed(g) for g in grad_outputs)
            cotangent = seeds if ctx.output_is_tuple else seeds[0]
            _, grads = ctx.vjp(*ctx.inputs, cotangent=cotangent)
            for k, g in zip(ctx.wanted, grads, strict=True):
                fn_grads[k] = _grad_tensor(g, ctx.shapes[k])
        return (None, None, *fn_grads)


def _grad_tensor(g: Any, shape: Any) -> Any:
    if isinstance(g, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(g))
    return torch.tensor(float(g), dtype=torch.float64).reshape(shape if shape is not None else ())


def rebuild(ref: tuple, wrt: Any, options: dict) -> TorchFunction:
    """A `sourcead.torch.function`, made again in this process from its pickled recipe."""
    check_options(ref, wrt, options)
    return function(resolve(ref), wrt, **options)
