"""`sourcead`: print generated derivative code, and inspect what the compiler decided.

Each subcommand lives in its own module; this one is the click group and its error handling.
"""

from __future__ import annotations

import sys

import click

import sourcead
from sourcead.errors import SourceADError

from .activity import activity
from .cache import cache
from .check import check
from .common import fail
from .emit import emit
from .passes import passes
from .sparsity import sparsity


class _Group(click.Group):
    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except SourceADError as exc:
            where = exc.where
            if where is None:
                fail(exc.message + (f" ({exc.hint})" if exc.hint else ""))
            click.echo(f"sourcead: error: {exc}", err=True)
            sys.exit(2)


@click.group(cls=_Group)
@click.version_option(sourcead.__version__, prog_name="sourcead")
def main() -> None:
    """Source-to-source automatic differentiation for numeric Python, compiled with numba."""


main.add_command(emit)
main.add_command(activity)
main.add_command(cache)
main.add_command(check)
main.add_command(passes)
main.add_command(sparsity)
