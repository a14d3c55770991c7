"""The errors for two names of one array that reverse mode refuses (`adjoint.py`), in the user's words.

The core form names what the user did not (`k` in `for row in B`, `result` for a helper's value):
each message takes its names and text from the user's own statement (the `for` line, the call
`h(x)`) and points at the write that makes the second name matter, where there is one.
"""

from __future__ import annotations

import libcst as cst

from .aliases import Conflict, view_base
from .core import Assign
from .errors import SourceADError
from .exprs import Rename, code
from .fence import local_names
from .parse import ParsedFunction

_UNSUPPORTED = "which reverse mode does not support yet"


def view_error(parsed: ParsedFunction, s: Assign, conflict: Conflict) -> SourceADError:
    """`s` makes a view (`v = a[i]`, a row of `for v in a`) and `conflict` writes through one name
    while the other is read."""
    view, (base, what) = s.var, view_base(s.value)  # type: ignore[misc]
    origin = s.origin
    if isinstance(origin, cst.For):  # `for row in B`: row = B[k], with a `k` of sourcead's
        return _loop_error(parsed, s, conflict, origin, base)
    written = origin.value if isinstance(origin, cst.Assign) else s.value  # as the user wrote it
    text = code(written)
    if not isinstance(written, (cst.Name, cst.Subscript, cst.Attribute, cst.Call)):
        text = f"({text})"
    if text != code(s.value):  # a helper's result: `y = h(x)` where h returns `u[1:]`
        what = f"`{text}` returns a view of it"
    copy = f"Write `{view} = {text}.copy()` for a separate array"
    if conflict.view_written:
        return parsed.error(
            f"`{view}` is a view of `{base}` ({what}), so writing `{view}` writes `{base}` too, {_UNSUPPORTED}",
            origin,
            f"{copy}, or index `{base}` itself.",
        )
    located = parsed.locate(conflict.where.origin)
    where = f" (line {located.line})" if located is not None else ""
    return parsed.error(
        f"`{view}` is a view of `{base}` ({what}), and `{base}` is written{where} while `{view}` is still read, "
        f"{_UNSUPPORTED}",
        origin,
        f"{copy}, or write `{base}` once `{view}` is no longer read.",
    )


def _loop_error(parsed: ParsedFunction, s: Assign, conflict: Conflict, loop: cst.For, base: str) -> SourceADError:
    """A view made by `for row in B` (`row = B[k]`, or `seq = B.T` for `for row in B.T`)."""
    header = f"for {code(loop.target)} in {code(loop.iter)}"
    users = _user_names(parsed)
    copied = cst.Attribute(cst.Name(base), cst.Name("copy"))
    over_copy = f"for {code(loop.target)} in {code(loop.iter.visit(Rename({base: cst.Call(copied)})))}"
    at = conflict.where.origin
    if s.var not in users:  # the iterated expression, computed before the loop: `B.T`
        return parsed.error(
            f"`{base}` is written here while the loop `{header}` reads a view of it, {_UNSUPPORTED}",
            at,
            f"Write `{base}` after the loop, or loop over a copy: `{over_copy}`.",
        )
    if conflict.view_written:
        return parsed.error(
            f"`{s.var}` is a row of `{base}` (`{header}`), so writing `{s.var}` writes `{base}` too, {_UNSUPPORTED}",
            at,
            f"Write `{base}` by index (`for i in range(len({base})):` and `{base}[i, ...] = ...`), "
            f"or write into a copy of the row: `r = {s.var}.copy()`.",
        )
    return parsed.error(
        f"`{base}` is written here while `{s.var}`, a row of it (`{header}`), is still read, {_UNSUPPORTED}",
        at,
        f"Write `{base}` once `{s.var}` is no longer read, or loop over a copy: `{over_copy}`.",
    )


def rename_error(parsed: ParsedFunction, s: Assign, source: str) -> SourceADError:
    """`y = x` (or `y = h(x)` where h returns its argument): two names of one array, then written."""
    origin = s.origin
    text = code(origin.value) if isinstance(origin, cst.Assign) else source
    if text == source:
        message = f"`{s.var} = {source}` makes two names for one array that is then written"
    else:
        shown = f"`{source}`" if source in _user_names(parsed) else "an array it was given"
        message = (
            f"`{s.var} = {text}` makes `{s.var}` a second name for {shown} (`{text}` returns that array "
            "itself, not a new one), and one of them is then written"
        )
    return parsed.error(f"{message}, {_UNSUPPORTED}", origin, f"Write `{s.var} = {text}.copy()`.")


def _user_names(parsed: ParsedFunction) -> set[str]:
    return local_names(parsed.node)
