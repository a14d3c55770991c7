"""The pass `parse`: find a function's source in its file and parse it with libcst.

The function's lines are parsed alone (an indented def under an `if 1:`), not dedented, and
every position moved down to where the lines stand in the file, so every node keeps its real file
position for error messages; where its block cannot be found, the whole file.
"""

from __future__ import annotations

import functools
import inspect
import tokenize
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider

from ..errors import Location, SourceADError
from ..functions import unwrap
from ..ir.exprs import children

_Defs = Mapping[str, list[cst.FunctionDef]]  # a file's functions by name, in file order


@dataclass(frozen=True)
class ParsedFunction:
    """A user function's syntax tree, its file positions and the globals its names resolve in."""

    name: str
    filename: str
    node: cst.FunctionDef
    lines: tuple[str, ...]
    globals: Mapping[str, Any]
    positions: Mapping[cst.CSTNode, CodeRange] = field(repr=False)
    # positions of the nodes a pass rebuilt from the user's (`carry`), where the parse's are shared
    rebuilt: dict[cst.CSTNode, CodeRange] = field(default_factory=dict, repr=False, compare=False)
    # the functions inlined into this one, as normalize renamed them: their nodes are located there
    inlined: list[ParsedFunction] = field(default_factory=list, repr=False, compare=False)

    def locate(self, node: cst.CSTNode | None) -> Location | None:
        """The file position of `node` (in an inlined function's file for its nodes), or None for
        nodes made by sourcead itself."""
        found = self._owner(node)
        if found is None:
            return None
        owner, code_range = found
        line = code_range.start.line
        text = owner.lines[line - 1] if 0 < line <= len(owner.lines) else ""
        return Location(owner.filename, line, code_range.start.column, text)

    def source_of(self, node: cst.CSTNode | None, statement: cst.CSTNode | None = None) -> str | None:
        """The text the user wrote for `node` (on one line), where it has a position: an inlined
        function's variables as that function spells them, not as normalize renamed them. Inside
        `statement`, as the function holding `statement` spells it (a caller's argument node that
        replaced an inlined function's parameter has the parameter's position there)."""
        holder = self._owner(statement)
        found = (holder[0]._owner(node, inlined=False) if holder else None) or self._owner(node)
        if found is None or found[1].start.line != found[1].end.line:
            return None
        owner, code_range = found
        line = owner.lines[code_range.start.line - 1] if 0 < code_range.start.line <= len(owner.lines) else ""
        return line[code_range.start.column : code_range.end.column] or None

    def adopt(self, inlined: ParsedFunction) -> ParsedFunction:
        """Take `inlined` (a function inlined into this one, renamed) as one whose nodes `locate` finds."""
        self.inlined.append(inlined)
        return inlined

    def _owner(self, node: cst.CSTNode | None, inlined: bool = True) -> tuple[ParsedFunction, CodeRange] | None:
        code_range = None if node is None else self.positions.get(node) or self.rebuilt.get(node)
        if code_range is not None:
            return self, code_range
        return next((found for inner in self.inlined if inlined and (found := inner._owner(node))), None)

    def error(self, message: str, node: cst.CSTNode | None, hint: str = "") -> SourceADError:
        return SourceADError(message, self.locate(node) or self.locate(self.node), hint)

    def carry(self, original: cst.CSTNode, rebuilt: cst.CSTNode) -> None:
        """Give the nodes of `rebuilt`, a pass's copy of `original`, the positions of theirs."""
        self.rebuilt.update(carried_positions(original, rebuilt, {**self.positions, **self.rebuilt}))


def carried_positions(
    original: cst.CSTNode, renamed: cst.CSTNode, positions: Mapping[cst.CSTNode, CodeRange]
) -> dict[cst.CSTNode, CodeRange]:
    """The file positions of the nodes of a rebuilt copy of a tree (an inlined callee's renamed
    body: its errors then point into the callee's file): node for node where the two trees agree;
    a name replaced by an expression, or an expression by a name, takes the original's position."""
    carried = {}
    stack = [(original, renamed)]
    while stack:
        old, new = stack.pop()
        if old in positions:
            carried[new] = positions[old]
        if type(old) is type(new) and len(children(old)) == len(children(new)):
            stack.extend(zip(children(old), children(new), strict=True))
    return carried


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
    first_line = func.__code__.co_firstlineno
    node: cst.FunctionDef | None = None
    positions: Mapping[cst.CSTNode, CodeRange] = {}
    snippet = _function_text(text, first_line)
    if snippet is not None:
        try:
            positions, defs = _parse_file(filename, *snippet)
            node = _find_def(defs, func.__name__, first_line, positions)
        except SourceADError:
            pass  # the whole file is parsed below, and its error reported
    if node is None:
        positions, defs = _parse_file(filename, text)
        node = _find_def(defs, func.__name__, first_line, positions)
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


def _function_text(text: str, first_line: int) -> tuple[str, int] | None:
    """The function's own lines and the number of file lines before the text parsed: an indented
    def (a method, a nested function) under an `if 1:` line, so the block parses with its own
    columns; `_parse_file` moves every position down by that number, so every node has its file's
    line and column. Parsing and positioning only these is what makes a function in a long file
    cheap: the whole 500-line benchmark file cost 0.4 s, and the function's lines below as many
    blank lines as lines before it 45 ms at line 660 (libcst keeps each blank line as a node),
    against 2 ms for the block alone. None where the block cannot be found, and then the whole
    file is parsed."""
    lines = text.splitlines(keepends=True)
    try:
        block = inspect.getblock(lines[first_line - 1 :])
    except (SyntaxError, tokenize.TokenError):
        return None
    if not block or not block[0].strip():
        return None
    if not block[0][:1].isspace():
        return "".join(block), first_line - 1
    if first_line < 2:
        return None
    return "if 1:\n" + "".join(block), first_line - 2


@functools.lru_cache(maxsize=64)
def _parse_file(filename: str, text: str, lines_before: int = 0) -> tuple[Mapping[cst.CSTNode, CodeRange], _Defs]:
    """`text` parsed, with the positions of its nodes in the file: `lines_before` lines down."""
    try:
        wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    except cst.ParserSyntaxError as exc:
        raise SourceADError(f"cannot parse {filename}: {exc.message}") from None
    positions = wrapper.resolve(PositionProvider)
    if lines_before:
        positions = {node: _moved(code_range, lines_before) for node, code_range in positions.items()}
    return positions, _defs(positions)


def _moved(code_range: CodeRange, lines: int) -> CodeRange:
    start, end = code_range.start, code_range.end
    return CodeRange(CodePosition(start.line + lines, start.column), CodePosition(end.line + lines, end.column))


def _find_def(
    defs: _Defs, name: str, first_line: int, positions: Mapping[cst.CSTNode, CodeRange]
) -> cst.FunctionDef | None:
    """The `def name` whose decorators or `def` line is at `first_line`."""
    for node in defs.get(name, ()):
        lines = [positions[node].start.line, positions[node.name].start.line]
        lines += [positions[d].start.line for d in node.decorators]
        if min(lines) <= first_line <= max(lines):
            return node
    return None


def _defs(positions: Mapping[cst.CSTNode, CodeRange]) -> _Defs:
    """The file's functions by name, in file order: found once per parse, not per function
    (a visit of a 500-line file cost a quarter of a second, paid again for every helper)."""
    defs: dict[str, list[cst.FunctionDef]] = {}
    for node in positions:
        if isinstance(node, cst.FunctionDef):
            defs.setdefault(node.name.value, []).append(node)
    for found in defs.values():
        found.sort(key=lambda node: (positions[node].start.line, positions[node].start.column))
    return defs
