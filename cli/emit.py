"""`sourcead emit PATH:FUNC --mode reverse|gradient|forward|hvp|vector|primal|sparsity --wrt NAMES
[--array NAME:NDIM[:DTYPE]] [--memory SIZE] [--after PASS] [-o FILE]`."""

from __future__ import annotations

import inspect
from pathlib import Path

import click

from sourcead.api.budget import memory_bytes
from sourcead.errors import SourceADError
from sourcead.ir.types import ARRAY_DTYPES, array_kind
from sourcead.pipeline.driver import generate, work
from sourcead.pipeline.passes import run, show, until

from .common import fail, load_function, parse_wrt

_ARRAY_HINT = (
    "emit has no example arguments, so it takes each argument's kind from how the code uses it, and took "
    "an array for a float here. Say which arguments are arrays with --array NAME[:NDIM] (of {names})."
)


def _float_for_array(message: str) -> bool:
    """Is this an error of an argument taken for a float that the code uses as an array?"""
    return "got a float" in message or "a float in another" in message


@click.command()
@click.argument("target", metavar="PATH:FUNC")
@click.option(
    "--mode",
    type=click.Choice(["reverse", "gradient", "forward", "hvp", "vector", "primal", "sparsity"]),
    default="reverse",
    show_default=True,
    help="reverse: adjoint code returning the value too (vjp, value_and_grad); gradient: the adjoint code "
    "grad runs, without what only the value needs; forward: tangent code (jvp); "
    "hvp: Hessian-vector products (reverse mode over the forward mode); vector: forward mode carrying "
    "several tangents at once; primal: the function's own code; sparsity: the pattern sweep (tangents are "
    "sets of inputs, `sourcead sparsity`).",
)
@click.option(
    "--wrt", required=True, help="Arguments to differentiate with respect to: names or positions, comma-separated."
)
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), help="Write the module to FILE.")
@click.option(
    "--array",
    "arrays",
    multiple=True,
    metavar="NAME[:NDIM[:DTYPE]]",
    help="Generate for argument NAME given as an array (of NDIM dimensions, default 1; of DTYPE float, "
    "int or bool, default float), where the code itself does not say (whole-array code, an index "
    "array the code copies first). Repeat for several arguments.",
)
@click.option(
    "--memory",
    metavar="SIZE",
    help="Reverse mode's memory budget, as memory= takes it (bytes, or 64kB, 16MB, 2GB): its time loops are "
    "checkpointed (snapshots and replays instead of records).",
)
@click.option(
    "--after",
    metavar="PASS",
    help="Instead of the module, print what the compiler made after PASS, any pass of the mode "
    "(`sourcead passes --mode MODE` lists them): the core form with the analyses so far, or the "
    "generated code. A debugging aid.",
)
def emit(
    target: str, mode: str, wrt: str, output: str | None, arrays: tuple[str, ...], memory: str | None, after: str | None
) -> None:
    """Print the generated derivative module of FUNC in PATH.

    The output is deterministic: the same input gives byte-identical text.
    """
    func = load_function(target)
    kinds = {}
    for item in arrays:
        name, _, rest = item.partition(":")
        ndim, _, dtype = rest.partition(":")
        if not name.isidentifier() or (ndim and not _dimensions(ndim)) or dtype not in ("", *ARRAY_DTYPES):
            fail(f"--array takes NAME, NAME:NDIM (1 to 32) or NAME:NDIM:DTYPE (float, int or bool), got {item!r}")
        kinds[name] = array_kind(int(ndim or 1), dtype or "float")
    try:
        budget = memory_bytes(int(memory) if memory is not None and memory.isdigit() else memory)
    except SourceADError as exc:
        fail(f"--memory: {exc.message}")
    try:
        if after is not None:
            passes = until(mode, after)
            unit = run(passes, work(func, mode, parse_wrt(wrt), kinds or None, budget))
            source = show(unit, passes[-1])
        else:
            source = generate(func, mode, parse_wrt(wrt), kinds or None, budget).source
    except SourceADError as exc:
        guessed = [p for p in inspect.signature(func).parameters if p not in kinds]
        if guessed and _float_for_array(exc.message):
            exc.hint = (exc.hint + "\n" if exc.hint else "") + _ARRAY_HINT.format(names=", ".join(guessed))
            exc.args = (exc._render(),)
        raise
    if output:
        Path(output).write_text(source, encoding="utf-8")
    else:
        click.echo(source, nl=False)


def _dimensions(text: str) -> bool:
    """Is `text` a number of dimensions numba's arrays can have (1 to 32)?"""
    return text.isdigit() and 1 <= int(text) <= 32
