"""`sourcead sparsity PATH:FUNC --wrt x [--hessian] [--plot FILE.png] [--shape x=N[xM]] [--value k=V]`:
a pattern's size, nonzeros, colours and whether it is static, at arguments drawn for the shapes
given (10 per axis for an array argument not given a shape)."""

from __future__ import annotations

import inspect

import click
import numpy as np

import sourcead as ad

from .common import fail, load_function, parse_wrt


def _shape(text: str, option: str) -> tuple[str, tuple[int, ...]]:
    name, sep, dims = text.partition("=")
    try:
        shape = tuple(int(d) for d in dims.lower().split("x"))
    except ValueError:
        shape = ()
    if not sep or not name or not shape or min(shape) < 1:
        fail(f"{option} {text!r}: expected NAME=N or NAME=NxM (positive sizes), e.g. x=200 or u=64x64")
    return name.strip(), shape


def _value(text: str) -> tuple[str, float | int]:
    name, sep, value = text.partition("=")
    try:
        number: float | int = int(value) if value.strip().lstrip("-").isdigit() else float(value)
    except ValueError:
        fail(f"--value {text!r}: expected NAME=NUMBER, e.g. k=3 or h=0.01")
    if not sep or not name:
        fail(f"--value {text!r}: expected NAME=NUMBER, e.g. k=3 or h=0.01")
    return name.strip(), number


DEFAULT_SIZE = 10  # each axis of an array argument not given a --shape


def _arguments(func, wrt: tuple, shapes: dict, values: dict, seed: int) -> tuple[tuple, list[str]]:
    """The arguments to sweep at: the shapes and values given, else the parameter's default, else
    what the code says the parameter is (a float array of 10 per axis, a float 1.0, an int 3)."""
    from sourcead.pipeline.driver import analyze

    params = inspect.signature(func).parameters
    unknown = (set(shapes) | set(values)) - set(params)
    if unknown:
        fail(f"{func.__name__} has no parameter {', '.join(sorted(unknown))}")
    kinds = analyze(func, wrt).kinds
    rng = np.random.default_rng(seed)
    args, said = [], []
    for name, param in params.items():
        if name in shapes:
            args.append(rng.uniform(0.5, 1.5, shapes[name]))
        elif name in values:
            args.append(values[name])
        elif param.default is not inspect.Parameter.empty:
            args.append(param.default)
        else:
            kind = kinds[name] if name in kinds.of else None
            if kind is not None and kind.is_array and kind.dtype == "float":
                args.append(rng.uniform(0.5, 1.5, (DEFAULT_SIZE,) * kind.ndim))
                said.append(f"{name}={'x'.join([str(DEFAULT_SIZE)] * kind.ndim)}")
            elif kind is not None and not kind.is_array and kind.dtype in ("float", "int"):
                args.append(1.0 if kind.dtype == "float" else 3)
                said.append(f"{name}={args[-1]}")
            else:
                fail(f"give `{name}` a value: --shape {name}=N (a float array) or --value {name}=V (a number)")
    return tuple(args), said


@click.command()
@click.argument("target", metavar="PATH:FUNC")
@click.option("--wrt", required=True, help="Arguments to differentiate with respect to: names or positions.")
@click.option(
    "--shape",
    "shapes",
    multiple=True,
    metavar="NAME=N[xM]",
    help="A float array argument's shape (values drawn uniformly in [0.5, 1.5]); repeat per argument.",
)
@click.option("--value", "values", multiple=True, metavar="NAME=V", help="A number argument's value (int or float).")
@click.option("--hessian", is_flag=True, help="The Hessian's pattern (FUNC returns a float) instead of the Jacobian's.")
@click.option("--seed", default=0, show_default=True, help="Seed of the values drawn for the arrays.")
@click.option("--plot", type=click.Path(dir_okay=False), metavar="FILE.png",
              help="Draw the pattern (needs matplotlib).")  # fmt: skip
def sparsity(
    target: str, wrt: str, shapes: tuple[str, ...], values: tuple[str, ...], hessian: bool, seed: int, plot: str | None
) -> None:
    """Print the sparsity pattern of FUNC's Jacobian (or Hessian): size, nonzeros, colours, and
    whether it is static (the same for every argument of these shapes) or local to the point."""
    from sourcead.colouring import bicolouring, column_colouring, row_colouring, star_colouring

    func = load_function(target)
    wrt_items = parse_wrt(wrt)
    args, said = _arguments(
        func, wrt_items, dict(_shape(s, "--shape") for s in shapes), dict(map(_value, values)), seed
    )
    of = "hessian" if hessian else "jacobian"
    prepared = ad.sparsity(func, wrt_items[0] if len(wrt_items) == 1 else wrt_items, of=of)
    pattern = prepared.pattern(*args)
    P = pattern.matrix
    m, n = P.shape
    lines = [f"{of} pattern of {func.__name__} with respect to {', '.join(map(str, wrt_items))}"]
    if said:
        lines.append(f"  arguments  {', '.join(said)} (not given: --shape NAME=NxM, --value NAME=V)")
    lines.append(f"  size       {m} x {n}")
    lines.append(f"  nonzeros   {P.nnz} ({100.0 * P.nnz / max(m * n, 1):.3g}% of the entries)")
    row_most = int(np.diff(P.indptr).max(initial=0))
    if hessian:
        colours = int(star_colouring(P).max(initial=-1)) + 1
        lines.append(f"  colours    star {colours} (hvps; lower bound {row_most}: the longest row)")
    else:
        columns = int(column_colouring(P).max(initial=-1)) + 1
        rows = int(row_colouring(P).max(initial=-1)) + 1
        rc, cc = bicolouring(P)
        both = f"{int(rc.max(initial=0))} + {int(cc.max(initial=0))}"
        col_most = int(np.diff(P.tocsc().indptr).max(initial=0))
        lines.append(f"  colours    forward {columns} (lower bound {row_most}: the longest row)")
        lines.append(f"             reverse {rows} (lower bound {col_most}: the longest column)")
        lines.append(f"             bicolouring {both} (reverse + forward passes)")
    if pattern.static:
        lines.append("  static     yes: every argument of these shapes (and int values) has this pattern")
    else:
        lines.append("  static     no: the pattern is that of the arguments drawn, because of")
        lines += [f"             {reason}" for reason in pattern.local]
    click.echo("\n".join(lines))
    if plot:
        _plot(P, plot, f"{func.__name__}: {of} pattern, {P.nnz} nonzeros")


def _plot(P, path: str, title: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        fail("--plot needs matplotlib: pip install 'sourcead[plot]'")
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.spy(P, markersize=max(0.5, min(4.0, 200.0 / max(P.shape))))
    ax.set_title(title, fontsize=9)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    click.echo(f"  plot       {path}")
