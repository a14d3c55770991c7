"""The errors for two names of one array that reverse mode refuses (`adjoint.py`), in the user's words.

The core form names what the user did not (`k` in `for row in B`, `result` for a helper's value,
`h_w` for a helper's local `w`): each message takes its names and text from the user's own
statement as written in its file (the `for` line, the call `h(x)`, the helper's line), and points
at the loop's write that makes the second name matter.
"""

from __future__ import annotations

import re

import libcst as cst

from ..errors import SourceADError
from ..ir.core import Assign
from ..ir.exprs import code, walk
from .aliases import Conflict, view_base
from .parse import ParsedFunction

_UNSUPPORTED = "which reverse mode does not support yet"


def view_error(parsed: ParsedFunction, s: Assign, conflict: Conflict) -> SourceADError:
    """`s` makes a view (`v = a[i]`, a row of `for v in a`) and `conflict` writes through one name
    while the other is read."""
    base, what = view_base(s.value)  # type: ignore[misc]
    origin = s.origin
    if isinstance(origin, cst.For):  # `for row in B`: row = B[k], with a `k` of sourcead's
        return _loop_error(parsed, s, conflict, origin, base)
    if isinstance(origin, cst.Call):  # a function's parameter bound to a view the caller passed
        return _argument_error(parsed, s, conflict, origin, base)
    written = origin.value if isinstance(origin, cst.Assign) else s.value  # as the user wrote it
    target = origin.targets[0].target if isinstance(origin, cst.Assign) else s.target
    view, text = _said(parsed, target, s.var, origin), _said(parsed, written, code(written), origin)
    if not isinstance(written, (cst.Name, cst.Subscript, cst.Attribute, cst.Call)):
        text = f"({text})"
    shown = _spelled(parsed, written, base, origin)
    if view_base(written) is None and not isinstance(written, cst.Attribute):  # `y = h(x)`, h returns `u[1:]`
        what = f"`{text}` returns a view of it"
    copy = f"Write `{view} = {text}.copy()` for a separate array"
    if conflict.view_written:
        return parsed.error(
            f"`{view}` is a view of `{shown}` ({what}), so writing `{view}` writes `{shown}` too, {_UNSUPPORTED}",
            origin,
            f"{copy}, or index `{shown}` itself.",
        )
    located = parsed.locate(conflict.where.origin)
    where = f" (line {located.line})" if located is not None else ""
    return parsed.error(
        f"`{view}` is a view of `{shown}` ({what}), and `{shown}` is written{where} while `{view}` is still read, "
        f"{_UNSUPPORTED}",
        origin,
        f"{copy}, or write `{shown}` once `{view}` is no longer read.",
    )


def _argument_error(parsed: ParsedFunction, s: Assign, conflict: Conflict, call: cst.Call, base: str) -> SourceADError:
    """`h(A, A[:, 2])`: the function's parameter is a view of `A`, which is written while the view
    is still read (or the parameter itself is written)."""
    callee = _said(parsed, call.func, code(call.func), call)
    argument = next((a.value for a in call.args if code(a.value) == code(s.value)), s.value)
    text = _said(parsed, argument, code(s.value), call)
    shown = _spelled(parsed, argument, base, call)
    if conflict.view_written:
        message = f"`{callee}` writes into its argument `{text}`, a view of `{shown}`, so it writes `{shown}` too"
    else:
        located = parsed.locate(conflict.where.origin)
        where = f" (line {located.line})" if located is not None else ""
        message = f"`{shown}` is written{where} while `{callee}` still reads its argument `{text}`, a view of it"
    return parsed.error(f"{message}, {_UNSUPPORTED}", call, f"Pass a separate array: `{text}.copy()`.")


def _loop_error(parsed: ParsedFunction, s: Assign, conflict: Conflict, loop: cst.For, base: str) -> SourceADError:
    """A view made by `for row in B` (`row = B[k]`, or `seq = B.T` for `for row in B.T`)."""
    target, iterated = (
        _said(parsed, loop.target, code(loop.target), loop),
        _said(parsed, loop.iter, code(loop.iter), loop),
    )
    header = f"for {target} in {iterated}"
    shown = _spelled(parsed, loop.iter, base, loop)
    copied = re.sub(rf"\b{re.escape(shown)}\b", f"{shown}.copy()", iterated, count=1)
    over_copy = f"for {target} in {copied}"
    at = conflict.where.origin
    if not any(isinstance(n, cst.Name) and n.value == s.var for n in walk(loop.target)):  # the iterated `B.T`
        return parsed.error(
            f"`{shown}` is written here while the loop `{header}` reads a view of it, {_UNSUPPORTED}",
            at,
            f"Write `{shown}` after the loop, or loop over a copy: `{over_copy}`.",
        )
    row = _spelled(parsed, loop.target, s.var, loop)
    if conflict.view_written:
        return parsed.error(
            f"`{row}` is a row of `{shown}` (`{header}`), so writing `{row}` writes `{shown}` too, {_UNSUPPORTED}",
            at,
            f"Write `{shown}` by index (`for i in range(len({shown})):` and `{shown}[i, ...] = ...`), "
            f"or write into a copy of the row: `{row}_copy = {row}.copy()`.",
        )
    return parsed.error(
        f"`{shown}` is written here while `{row}`, a row of it (`{header}`), is still read, {_UNSUPPORTED}",
        at,
        f"Write `{shown}` once `{row}` is no longer read, or loop over a copy: `{over_copy}`.",
    )


def rename_error(parsed: ParsedFunction, s: Assign, source: str) -> SourceADError:
    """`y = x` (or `y = h(x)` where h returns its argument): two names of one array, then written."""
    origin = s.origin
    if isinstance(origin, cst.Assign) and len(origin.targets) > 1:  # a = b = np.zeros(n)
        names = [_said(parsed, t.target, s.var, origin) for t in origin.targets]
        text = _said(parsed, origin.value, source, origin)
        return parsed.error(
            f"`{' = '.join(names)} = {text}` gives one array {len(names)} names (Python assigns the one "
            f"value to each), and one of them is then written, {_UNSUPPORTED}",
            origin,
            f"Give each name an array of its own: `{names[0]} = {text}`, then `{names[1]} = {names[0]}.copy()`.",
        )
    value = origin.value if isinstance(origin, cst.Assign) else None
    target = origin.targets[0].target if isinstance(origin, cst.Assign) else s.target
    name, text = _said(parsed, target, s.var, origin), _said(parsed, value, source, origin)
    if isinstance(value, cst.Name):
        message = f"`{name} = {text}` makes two names for one array that is then written"
    else:
        given = _spelled(parsed, value, source, origin) if value is not None else source
        shown = "an array it was given" if given == source and not _is_users(parsed, source) else f"`{given}`"
        message = (
            f"`{name} = {text}` makes `{name}` a second name for {shown} (`{text}` returns that array "
            "itself, not a new one), and one of them is then written"
        )
    return parsed.error(f"{message}, {_UNSUPPORTED}", origin, f"Write `{name} = {text}.copy()`.")


def _said(parsed: ParsedFunction, node: cst.CSTNode | None, otherwise: str, statement: cst.CSTNode) -> str:
    """`node`, part of `statement`, as the user wrote it (an inlined function's names as it spells
    them), else `otherwise`."""
    return parsed.source_of(node, statement) or otherwise


def _spelled(parsed: ParsedFunction, tree: cst.CSTNode | None, name: str, statement: cst.CSTNode) -> str:
    """The user's spelling of the variable the core form calls `name`, where `tree` (part of
    `statement`) reads it."""
    for node in walk(tree) if tree is not None else ():
        if isinstance(node, cst.Name) and node.value == name:
            return _said(parsed, node, name, statement)
    return name


def _is_users(parsed: ParsedFunction, name: str) -> bool:
    """Did the user write `name` in the differentiated function (not a name sourcead made)?"""
    return any(isinstance(n, cst.Name) and n.value == name for n in walk(parsed.node))
