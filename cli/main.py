"""`sourcead`: print generated derivative code, and inspect what the compiler decided."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import NoReturn

import click

import sourcead
from sourcead.errors import SourceADError
from sourcead.pipeline import analyze, generate


def _fail(message: str) -> NoReturn:
    click.echo(f"sourcead: error: {message}", err=True)
    sys.exit(2)


def _load_function(target: str):
    """`path/to/file.py:func` -> the function object (the file is imported as a module)."""
    path_text, sep, func_name = target.rpartition(":")
    if not sep or not path_text or not func_name:
        _fail(f"expected PATH:FUNC, e.g. examples/heat.py:heat_loss; got {target!r}")
    path = Path(path_text)
    if not path.is_file():
        _fail(f"no such file: {path_text}")
    module = _import_file(path)
    func = getattr(module, func_name, None)
    if func is None or not callable(func):
        _fail(f"{path_text} has no function named {func_name!r}")
    return func


def _import_file(path: Path) -> ModuleType:
    name = f"sourcead_user_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        _fail(f"cannot import {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the user's module failed to import: say so in one line
        _fail(f"importing {path} failed: {type(exc).__name__}: {exc}")
    return module


def _parse_wrt(text: str) -> tuple[str | int, ...]:
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        _fail("--wrt needs at least one argument name or position")
    return tuple(int(item) if item.lstrip("-").isdigit() else item for item in items)


class _Group(click.Group):
    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except SourceADError as exc:
            where = exc.where
            if where is None:
                _fail(exc.message + (f" ({exc.hint})" if exc.hint else ""))
            click.echo(f"sourcead: error: {exc}", err=True)
            sys.exit(2)


@click.group(cls=_Group)
@click.version_option(sourcead.__version__, prog_name="sourcead")
def main() -> None:
    """Source-to-source automatic differentiation for numeric Python, compiled with numba."""


@main.command()
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
    func = _load_function(target)
    source = generate(func, mode, _parse_wrt(wrt)).source
    if output:
        Path(output).write_text(source, encoding="utf-8")
    else:
        click.echo(source, nl=False)


@main.command()
@click.argument("target", metavar="PATH:FUNC")
@click.option(
    "--wrt", required=True, help="Arguments to differentiate with respect to: names or positions, comma-separated."
)
def activity(target: str, wrt: str) -> None:
    """Print each variable of FUNC as active or constant, and why."""
    func = _load_function(target)
    prog = analyze(func, _parse_wrt(wrt))
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
