"""`sourcead emit PATH:FUNC --mode reverse|forward --wrt NAMES [-o FILE]`."""

from __future__ import annotations

from pathlib import Path

import click

from sourcead.pipeline import generate

from .common import load_function, parse_wrt


@click.command()
@click.argument("target", metavar="PATH:FUNC")
@click.option(
    "--mode",
    type=click.Choice(["reverse", "forward"]),
    default="reverse",
    show_default=True,
    help="reverse: adjoint code (gradients, vjp); forward: tangent code (jvp).",
)
@click.option(
    "--wrt", required=True, help="Arguments to differentiate with respect to: names or positions, comma-separated."
)
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), help="Write the module to FILE.")
def emit(target: str, mode: str, wrt: str, output: str | None) -> None:
    """Print the generated derivative module of FUNC in PATH.

    The output is deterministic: the same input gives byte-identical text.
    """
    func = load_function(target)
    source = generate(func, mode, parse_wrt(wrt)).source
    if output:
        Path(output).write_text(source, encoding="utf-8")
    else:
        click.echo(source, nl=False)
