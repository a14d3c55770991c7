"""`sourcead activity PATH:FUNC --wrt NAMES`: each variable, active or constant, and why."""

from __future__ import annotations

import click

from sourcead.pipeline.driver import analyze

from .common import load_function, parse_wrt


@click.command()
@click.argument("target", metavar="PATH:FUNC")
@click.option(
    "--wrt", required=True, help="Arguments to differentiate with respect to: names or positions, comma-separated."
)
def activity(target: str, wrt: str) -> None:
    """Print each variable of FUNC as active or constant, and why."""
    func = load_function(target)
    prog = analyze(func, parse_wrt(wrt))
    facts = prog.activity
    for var in sorted(prog.kinds.of):
        kind = prog.kinds[var]
        varied_from, useful_for = facts.because.get(var, (frozenset(), frozenset()))
        if var in facts.active:
            why = f"varied from {', '.join(sorted(varied_from))}; useful for {', '.join(sorted(useful_for))}"
            click.echo(f"{var:<16} active    ({kind}) {why}")
        elif kind == "int":
            click.echo(f"{var:<16} constant  (int) integers carry no derivative")
        elif not varied_from:
            click.echo(f"{var:<16} constant  ({kind}) does not depend on {', '.join(prog.wrt)}")
        else:
            click.echo(
                f"{var:<16} constant  ({kind}) varied from {', '.join(sorted(varied_from))} but influences no result"
            )
