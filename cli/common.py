"""Helpers shared by the subcommands: loading PATH:FUNC, parsing --wrt, one-line errors."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import NoReturn

import click


def fail(message: str) -> NoReturn:
    click.echo(f"sourcead: error: {message}", err=True)
    sys.exit(2)


def load_function(target: str):
    """`path/to/file.py:func` -> the function object (the file is imported as a module)."""
    path_text, sep, func_name = target.rpartition(":")
    if not sep or not path_text or not func_name:
        fail(f"expected PATH:FUNC, e.g. examples/heat.py:heat_loss; got {target!r}")
    path = Path(path_text)
    if not path.is_file():
        fail(f"no such file: {path_text}")
    module = import_file(path)
    func = getattr(module, func_name, None)
    if func is None or not callable(func):
        fail(f"{path_text} has no function named {func_name!r}")
    return func


def import_file(path: Path) -> ModuleType:
    # the module already imported from this very file, if any: importing it again under another
    # name would compile its functions with numba's disk cache under that name, which a later
    # process, importing the file under its own name, could not load
    loaded = sys.modules.get(path.stem)
    if loaded is not None and _same_file(getattr(loaded, "__file__", None), path):
        return loaded
    # its own name when free, so generated code refers to it as a program importing it would
    name = path.stem if path.stem.isidentifier() and path.stem not in sys.modules else f"sourcead_user_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        fail(f"cannot import {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the user's module failed to import: say so in one line
        fail(f"importing {path} failed: {type(exc).__name__}: {exc}")
    return module


def parse_wrt(text: str) -> tuple[str | int, ...]:
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        fail("--wrt needs at least one argument name or position")
    return tuple(int(item) if item.lstrip("-").isdigit() else item for item in items)


def _same_file(loaded: str | None, path: Path) -> bool:
    return loaded is not None and os.path.exists(loaded) and os.path.samefile(loaded, path)
