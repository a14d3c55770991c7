"""Pass 1, parse: find a function's source in its file and parse it with libcst.

The whole file is parsed (not a dedented snippet), so every node keeps its real file position
for error messages, and methods or nested functions need no dedenting.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from .errors import Location, SourceADError
from .functions import unwrap


@dataclass(frozen=True)
class ParsedFunction:
    """A user function's syntax tree, its file positions and the globals its names resolve in."""

    name: str
    filename: str
    node: cst.FunctionDef
    lines: tuple[str, ...]
    globals: Mapping[str, Any]
    positions: Mapping[cst.CSTNode, CodeRange] = field(repr=False)

    def locate(self, node: cst.CSTNode | None) -> Location | None:
        """The file position of `node`, or None for nodes made by sourcead itself."""
        code_range = self.positions.get(node) if node is not None else None
        if code_range is None:
            return None
        line = code_range.start.line
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return Location(self.filename, line, code_range.start.column, text)

    def error(self, message: str, node: cst.CSTNode | None, hint: str = "") -> SourceADError:
        return SourceADError(message, self.locate(node) or self.locate(self.node), hint)


def parse_function(func: Callable) -> ParsedFunction:
    func = unwrap(func)
    if not inspect.isfunction(func):
        raise SourceADError(
            f"sourcead differentiates Python functions; got {type(func).__name__}",
            hint="Pass a function defined with `def` in a .py file.",
        )
    filename = inspect.getsourcefile(func)
    if filename is None:
        raise SourceADError(f"cannot find the source file of {func.__qualname__}")
    try:
        text = _read(filename)
    except OSError as exc:
        raise SourceADError(
            f"cannot read the source of {func.__qualname__}: {exc}",
            hint="sourcead needs functions defined in a .py file (not in a REPL or exec).",
        ) from None
    module, positions = _parse_file(filename, text)
    node = _find_def(module, func.__name__, func.__code__.co_firstlineno, positions)
    if node is None:
        raise SourceADError(
            f"cannot find `def {func.__name__}` at line {func.__code__.co_firstlineno} of {filename}",
            hint="Was the file edited after it was imported? Reload it and try again.",
        )
    return ParsedFunction(
        name=func.__name__,
        filename=filename,
        node=node,
        lines=tuple(text.splitlines()),
        globals=func.__globals__,
        positions=positions,
    )


def _read(filename: str) -> str:
    with open(filename, encoding="utf-8") as fh:
        return fh.read()


@functools.lru_cache(maxsize=64)
def _parse_file(filename: str, text: str) -> tuple[cst.Module, Mapping[cst.CSTNode, CodeRange]]:
    try:
        wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    except cst.ParserSyntaxError as exc:
        raise SourceADError(f"cannot parse {filename}: {exc.message}") from None
    return wrapper.module, wrapper.resolve(PositionProvider)


def _find_def(
    module: cst.Module, name: str, first_line: int, positions: Mapping[cst.CSTNode, CodeRange]
) -> cst.FunctionDef | None:
    """The `def name` whose decorators or `def` line is at `first_line`."""
    found: list[cst.FunctionDef] = []

    class Finder(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            if node.name.value != name:
                return
            lines = [positions[node].start.line, positions[node.name].start.line]
            lines += [positions[d].start.line for d in node.decorators]
            if min(lines) <= first_line <= max(lines):
                found.append(node)

    module.visit(Finder())
    return found[0] if found else None
