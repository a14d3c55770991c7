"""`sourcead passes [--mode MODE]`: the compiler's passes in the order they run, with what each does."""

from __future__ import annotations

import click

from sourcead.pipeline.passes import PIPELINES


@click.command()
@click.option("--mode", type=click.Choice(list(PIPELINES)), default="reverse", show_default=True)
def passes(mode: str) -> None:
    """Print the passes of MODE in order: name, what it does, what it reads and makes.

    `sourcead emit ... --after NAME` prints the code or core form after any of them.
    """
    for p in PIPELINES[mode]:
        needs = ", ".join(p.needs) or "the function"
        click.echo(f"{p.name:<20} {p.description}")
        click.echo(f"{'':<20}   reads {needs}; makes {p.produces or 'checks only'}")
