"""`sourcead check PATH:FUNC [--wrt NAMES] [--order 2]`: FUNC's derivatives against finite differences."""

from __future__ import annotations

import inspect
import sys

import click
import numpy as np

from sourcead.api.check import check_derivative
from sourcead.functions import unwrap

from .common import fail, load_function, parse_wrt


@click.command()
@click.argument("target", metavar="PATH:FUNC")
@click.option(
    "--wrt",
    help="Arguments to differentiate with respect to: names or positions, comma-separated. "
    "Default: every argument whose example value is a float or a float64 array.",
)
@click.option("--rtol", type=float, default=1e-6, show_default=True, help="Relative tolerance of every check.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random directions.")
@click.option("--jit/--no-jit", default=True, show_default=True, help="Compile with numba, or run plain Python.")
@click.option(
    "--order",
    type=click.IntRange(1, 2),
    default=1,
    show_default=True,
    help="2: also the Hessian-vector product against differences of the gradient, and its symmetry.",
)
def check(target: str, wrt: str | None, rtol: float, seed: int, jit: bool, order: int) -> None:
    """Check FUNC's forward and reverse derivatives against finite differences and each other.

    The arguments come from the module that defines FUNC: it defines `example_args_FUNC()`
    (one per function) or `example_args()`, returning the tuple of arguments to check at.

    Prints one line per check; exits with 0 if every check passes, 1 if one fails, 2 on bad input.
    """
    func = load_function(target)
    args = _example_args(unwrap(func))
    names = parse_wrt(wrt) if wrt is not None else _float_arguments(unwrap(func), args)
    report = check_derivative(func, *args, wrt=names, jit=jit, rtol=rtol, seed=seed, order=order)
    click.echo(str(report))
    sys.exit(0 if report.ok else 1)


def _example_args(func) -> tuple:
    """The arguments from `example_args_FUNC()` or `example_args()` beside FUNC."""
    names = (f"example_args_{func.__name__}", "example_args")
    make = next((func.__globals__[n] for n in names if callable(func.__globals__.get(n))), None)
    if make is None:
        fail(f"{func.__name__} needs example arguments: define {names[0]}() or {names[1]}() in its module")
    try:
        args = make()
    except Exception as exc:  # the user's code failed: say so in one line
        fail(f"{make.__name__}() failed: {type(exc).__name__}: {exc}")
    if not isinstance(args, tuple):
        fail(f"{make.__name__}() must return a tuple of arguments, got {type(args).__name__}")
    params = list(inspect.signature(func).parameters)
    if len(args) != len(params):
        fail(
            f"{make.__name__}() gives {len(args)} arguments; {func.__name__} takes {len(params)} ({', '.join(params)})"
        )
    return args


def _float_arguments(func, args: tuple) -> tuple[int, ...]:
    """Positions of the float and float64-array arguments: what --wrt defaults to."""
    positions = tuple(
        k
        for k, a in enumerate(args)
        if isinstance(a, (float, np.floating)) or (isinstance(a, np.ndarray) and a.dtype == np.float64)
    )
    if not positions:
        fail(f"no argument of {func.__name__} is a float or a float64 array: nothing to check")
    return positions
