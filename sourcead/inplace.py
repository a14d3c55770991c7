"""Pass 4b, in place: an augmented assignment to a name that holds an array writes the array.

In Python `C += B` on an array updates C's memory: the caller's array when C is an argument (its
final state is then an output), the caller's when a helper updates its parameter. On a float it
binds a new value. Only kinds tell the two apart, so normalize marks `C += B` as `inplace` and a
helper's parameter bound to the caller's variable as `shares`; once kinds are known, this pass
writes every in-place update of an array into all its elements, the spelling
(`C[:, :] += B`) that every later pass already handles:

    C += B              ->  C[:, :] += B
    C *= 1.2            ->  C[:, :] = C * (1.2)
    h_C = C             ->  (dropped: the helper's parameter is the caller's array)
    h_C *= 1.2          ->  C[:, :] = C * (1.2)

An in-place update of an array that another name holds too (`D = C; D += B`), or of a helper's
parameter that the helper also rebinds before the update, is refused at the update.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import libcst as cst

from .core import Assign, CoreFunction, For, If, Stmt, While, blocks, walk_statements, written, written_parameters
from .errors import SourceADError
from .exprs import code, names_in, paren
from .kinds import Kinds
from .loopvars import renamed
from .parse import ParsedFunction
from .program import view_of

_SIGN = {"+": cst.Add, "-": cst.Subtract}


def lower_inplace(fn: CoreFunction, kinds: Kinds, parsed: ParsedFunction) -> CoreFunction:
    """`fn` with every in-place update of an array written element by element (see above)."""
    if not any(isinstance(s, Assign) and s.inplace and kinds.is_array(s.var) for s in walk_statements(fn.body)):
        return fn
    body = fn.body
    while (found := _shared_parameter(body, kinds, parsed)) is not None:
        body = _resolved(body, *found)
    for s in walk_statements(body):
        if isinstance(s, Assign) and s.inplace and kinds.is_array(s.var):
            _check(s, body, kinds, parsed)
    body = _mapped(body, lambda s: [_lowered(s, kinds) if isinstance(s, Assign) and s.inplace else s])
    return replace(fn, body=body, mutated=written_parameters(fn.params, body))


def _shared_parameter(
    body: tuple[Stmt, ...], kinds: Kinds, parsed: ParsedFunction
) -> tuple[Assign, list[Assign]] | None:
    """A helper's array parameter `h_C = C` that the helper updates in place: `(binding, [])` if
    the helper never rebinds it (the caller's array under a second name, which renaming it to `C`
    removes), `(binding, updates)` if the helper rebinds it to a new array before any update."""
    statements = list(walk_statements(body))
    for binding in statements:
        if not (isinstance(binding, Assign) and binding.shares and kinds.is_array(binding.var)):
            continue
        updates = [s for s in statements if isinstance(s, Assign) and s.inplace and s.var == binding.var]
        if not updates:
            continue
        function, param = code(binding.origin.func), binding.shares  # type: ignore[attr-defined]
        if not isinstance(binding.value, cst.Name):
            raise _error(
                f"`{function}` updates its argument `{param}` in place (`{_shown(updates[0])}`), and this call "
                f"passes it a row of `{code(binding.value.value)}`, which sourcead does not follow yet",  # type: ignore[attr-defined]
                binding,
                parsed,
                f"Pass `{code(binding.value.value)}` and the index, and update the row there: "  # type: ignore[attr-defined]
                f"`{code(binding.value)} += ...`.",
            )
        rebinds = [s for s in statements if s is not binding and binding.var in _defines(s) and not _is_update(s)]
        if not rebinds:
            return binding, []
        if not _rebound_first(binding, rebinds[0], updates, body):
            raise _error(
                f"`{function}` updates its argument `{param}` in place (`{_shown(updates[0])}`) and also assigns "
                f"`{param}` a new value, which sourcead does not follow yet",
                binding,
                parsed,
                f"Give the new value another name in `{function}` (`{param}2 = {param} * 2.0`).",
            )
        return binding, updates
    return None


def _resolved(body: tuple[Stmt, ...], binding: Assign, updates: list[Assign]) -> tuple[Stmt, ...]:
    """`body` with a helper's parameter named as the caller's array, or with its updates as
    rebindings where it holds a new array already (updating that one in place is rebinding it)."""
    if updates:
        return _mapped(body, lambda s: [replace(s, inplace=False) if s in updates else s])
    source = binding.value.value  # type: ignore[attr-defined]
    return renamed(_mapped(body, lambda s: [] if s is binding else [s]), binding.var, source)


def _rebound_first(binding: Assign, rebind: Stmt, updates: list[Assign], body: tuple[Stmt, ...]) -> bool:
    """Is the parameter rebound to a new array before any in-place update can run (a statement of
    the block that binds it, ahead of every update)? Then the updates change that new array only."""
    block = _block_of(binding, body)
    if block is None or rebind not in block or not isinstance(rebind, Assign) or isinstance(rebind.value, cst.Name):
        return False
    order = list(walk_statements(body))
    return all(order.index(rebind) < order.index(u) for u in updates)


def _block_of(stmt: Stmt, body: tuple[Stmt, ...]) -> tuple[Stmt, ...] | None:
    if stmt in body:
        return body
    for s in body:
        for block in blocks(s):
            found = _block_of(stmt, block)
            if found is not None:
                return found
    return None


def _check(s: Assign, body: tuple[Stmt, ...], kinds: Kinds, parsed: ParsedFunction) -> None:
    """Refuse an in-place update that NumPy refuses, or that another name of the array would see."""
    defs = [t for t in walk_statements(body) if isinstance(t, Assign) and s.var in _defines(t) and not _is_update(t)]
    types = [kinds[s.var], *(kinds.type_of(t.value) for t in defs)]
    if any(t.dtype != "float" for t in types) and kinds.type_of(s.value).dtype == "float":
        raise _error(
            f"`{_shown(s)}` stores floats into an integer array in place, which NumPy refuses",
            s,
            parsed,
            "Make a new float array (`a = a * 1.5`), or start from a float array.",
        )
    for t in defs:
        if t.shares:
            continue  # a helper's parameter, rebound to a new array before its updates
        written = parsed.locate(t.origin)
        if isinstance(t.value, cst.Name) and kinds.is_array(t.value.value):
            shown = written.source_line.strip() if written else f"{code(t.target)} = {code(t.value)}"
            raise _error(
                f"`{_shown(s)}` updates an array in place that another name holds too (`{shown}`), "
                "which sourcead does not follow yet",
                s,
                parsed,
                f"Make a separate array with `.copy()`, or update `{code(t.value)}`.",
            )
        viewed = view_of(t.value)
        if viewed is not None:
            base, what = viewed
            how = f"`{code(t.value)} += ...`" if written else f"`for i in range(len({base})): {base}[i] += ...`"
            raise _error(
                f"`{_shown(s)}` updates `{s.var}` in place, a view of `{base}` ({what}), which sourcead "
                "does not follow yet",
                s,
                parsed,
                f"Update `{base}` itself ({how}), or make a separate array with `.copy()`.",
            )


def _error(message: str, s: Assign, parsed: ParsedFunction, hint: str) -> SourceADError:
    """At the user's line of `s` (a helper's own file and line where `s` came from a helper)."""
    return SourceADError(message, s.where or parsed.locate(s.origin) or parsed.locate(parsed.node), hint)


def _is_update(s: Stmt) -> bool:
    return isinstance(s, Assign) and s.inplace


def _lowered(s: Assign, kinds: Kinds) -> Assign:
    """`C op= e` on an array C: all of C's elements written; on a float: `C = C op e` as it was."""
    if not kinds.is_array(s.var):
        return replace(s, inplace=False)
    everything = cst.parse_expression(f"{s.var}[{', '.join([':'] * kinds.ndim(s.var))}]")
    if s.accumulate is not None and s.var not in names_in(s.value):
        return replace(s, target=everything, inplace=False)
    if s.accumulate is not None:  # `C += C * B` once a helper's parameter became the caller's C
        value = cst.BinaryOperation(cst.Name(s.var), _SIGN[s.accumulate](), paren(s.value))
    else:  # the array as it is now, after what a call on the right wrote into it
        value = s.value.with_changes(left=cst.Name(s.var))  # type: ignore[attr-defined]
    return replace(s, target=everything, value=value, accumulate=None, inplace=False)


def _shown(s: Assign) -> str:
    """The update as the user wrote it (`C *= 1.2`), in a helper too (where its names are renamed)."""
    return s.where.source_line.strip() if s.where is not None else code(s.origin).strip()


def _defines(s: Stmt) -> set[str]:
    """The names `s` binds as a whole (not element writes)."""
    return set() if isinstance(s, Assign) and s.writes_element else written(s)


def _mapped(body: tuple[Stmt, ...], change: Callable[[Stmt], list[Stmt]]) -> tuple[Stmt, ...]:
    """`body` with every simple statement replaced by `change(statement)` (compound ones rebuilt)."""
    out: list[Stmt] = []
    for s in body:
        if isinstance(s, (For, While)):
            out.append(replace(s, body=_mapped(s.body, change)))
        elif isinstance(s, If):
            out.append(replace(s, body=_mapped(s.body, change), orelse=_mapped(s.orelse, change)))
        else:
            out += change(s)
    return tuple(out)


__all__ = ["lower_inplace"]
