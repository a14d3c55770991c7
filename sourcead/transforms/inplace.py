"""The pass `inplace`: an augmented assignment to a name that holds an array updates its memory.

In Python `C += B` on an array writes C's elements: the caller's array when C is an argument (its
final state is then an output), the caller's when a helper updates its parameter, and what every
other name of the array sees. On a float it binds a new value. Only kinds tell the two apart, so
normalize marks `C += B` as `inplace` and a helper's parameter bound to the caller's variable as
`shares`; once kinds are known, this pass

- makes a helper's array parameter that the helper updates in place the caller's variable itself
  (`h_C = C` dropped, `h_C` renamed `C`), so the update reaches the caller;
- writes an update of an array that other code sees (an argument, or an array another name holds
  too) into all its elements, the spelling every later pass already handles:

      C += B      ->  C[:, :] += B
      C *= 1.2    ->  C[:, :] = C * (1.2)

- leaves an update of an array only this name holds as it was (`u = u * (1.2)`, `acc += B`: the
  same values, and a prange loop's reduction into a local array stays one), and floats too;
- refuses what it cannot follow, at the user's line: an update through a second name or a view
  (`D = C; D += B`, `r = A[0]; r += b`), a helper that updates a row it was passed or rebinds its
  updated parameter, an argument updated whole in a prange loop. (Floats into an integer array,
  which NumPy refuses, kinds refuses: the two types of one name.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TypeGuard

import libcst as cst

from ..analysis.kinds import Kinds
from ..analysis.reads import values_read
from ..errors import SourceADError
from ..frontend.aliases import view_base
from ..frontend.loopvars import renamed
from ..frontend.outputs import written_outputs
from ..frontend.parse import ParsedFunction
from ..ir.core import (
    Assign,
    CoreFunction,
    For,
    If,
    Permute,
    Stmt,
    While,
    blocks,
    walk_statements,
    written,
)
from ..ir.exprs import code, names_in, paren
from ..ir.naming import Namer

_SIGN = {"+": cst.Add, "-": cst.Subtract}


def lower_inplace(fn: CoreFunction, kinds: Kinds, parsed: ParsedFunction, namer: Namer) -> tuple[CoreFunction, Kinds]:
    """`fn` with every in-place update of an array that other code sees written element by element
    (and the written arguments followed again: `outputs.py`), and the kinds without the helpers'
    parameters it renamed."""
    if not any(isinstance(s, Assign) and s.inplace and kinds.is_array(s.var) for s in walk_statements(fn.body)):
        return fn, kinds
    body = fn.body
    gone: set[str] = set()
    while (binding := _shared_parameter(body, kinds, parsed)) is not None:
        source = binding.value.value  # type: ignore[attr-defined]

        def dropped(s: Stmt, b: Assign = binding) -> list[Stmt]:
            return [] if s is b else [s]

        body = renamed(_mapped(body, dropped), binding.var, source)
        gone.add(binding.var)
    updates = [s for s in walk_statements(body) if _is_update(s) and kinds.is_array(s.var)]
    before = _may_run_before(body)
    aliased = {s for s in updates if _check(s, body, kinds, parsed, before)}
    seen = _seen_elsewhere(fn.params, body, kinds, before)
    writes = {s for s in updates if seen(s) or s in aliased}
    for loop in walk_statements(body):
        if isinstance(loop, For) and loop.parallel:
            _check_parallel(loop, writes, parsed)
    renamed_array = {s for s in updates if s not in writes and _once_another_name(s, body, kinds, before)}
    body = _mapped(
        body,
        lambda s: [_lowered(s, kinds) if isinstance(s, Assign) and s in writes else _unmarked(s, s in renamed_array)],
    )
    kept = replace(kinds, of={name: t for name, t in kinds.of.items() if name not in gone})
    if not writes:
        return replace(fn, body=body), kept
    body, mutated, finals = written_outputs(body, fn.params, namer, lambda *a: parsed.error(*a))
    return replace(fn, body=body, mutated=mutated, finals=finals if finals != mutated else ()), kept


def _seen_elsewhere(
    params: tuple[str, ...], body: tuple[Stmt, ...], kinds: Kinds, before: Callable[[Stmt, Stmt], bool]
) -> Callable[[Assign], bool]:
    """Does other code see the array an update writes? An argument's (the caller's memory), and
    one that another name is bound to where the update may run after it (`D = C`, a row
    `r = A[i]`, `A.T`, a swap)."""
    shared: list[tuple[Stmt, str]] = []
    for s in walk_statements(body):
        if isinstance(s, Permute):
            shared += [(s, name) for name in (*s.targets, *s.sources)]
        elif isinstance(s, Assign) and not s.writes_element and kinds.is_array(s.var):
            if isinstance(s.value, cst.Name) and s.value.value != s.var:
                shared.append((s, s.value.value))
            elif (viewed := view_base(s.value)) is not None:
                shared.append((s, viewed[0]))

    def seen(update: Assign) -> bool:
        var = update.var
        return var in params or any(name == var and before(t, update) for t, name in shared)

    return seen


def _may_run_before(body: tuple[Stmt, ...]) -> Callable[[Stmt, Stmt], bool]:
    """May statement `t` run before statement `s` (earlier in the function, or in a loop around both)?"""
    order = {s: k for k, s in enumerate(walk_statements(body))}
    loops = _loops_around(body)
    return lambda t, s: order[t] < order[s] or bool(loops[t] & loops[s])


def _loops_around(body: tuple[Stmt, ...], around: frozenset[Stmt] = frozenset()) -> dict[Stmt, frozenset[Stmt]]:
    """The loops around each statement."""
    found: dict[Stmt, frozenset[Stmt]] = {}
    for s in body:
        found[s] = around
        inner = around | {s} if isinstance(s, (For, While)) else around
        for block in blocks(s):
            found.update(_loops_around(block, inner))
    return found


def _unmarked(s: Stmt, rebinding: bool = False) -> Stmt:
    """An update that stays as it reads; `rebinding`: written `u = u + (e)`, not `u += e`, where
    the name held another name's array before (a new one now), which a `+=` would seem to write."""
    if not (isinstance(s, Assign) and s.inplace):
        return s
    if rebinding and s.accumulate is not None:
        value = cst.BinaryOperation(cst.Name(s.var), _SIGN[s.accumulate](), paren(s.value))
        return replace(s, value=value, accumulate=None, inplace=False)
    return replace(s, inplace=False)


def _once_another_name(s: Assign, body: tuple[Stmt, ...], kinds: Kinds, before: Callable[[Stmt, Stmt], bool]) -> bool:
    """Was the array `s` updates bound to another name's array or view earlier (`h_C = C`, then
    `h_C = h_C * 2.0` made it a new one: `_check` refuses the rest)?"""
    var = s.var
    return any(
        isinstance(t, Assign)
        and t.var == var
        and not t.writes_element
        and not t.inplace
        and before(t, s)
        and _names_another(t, kinds)
        for t in walk_statements(body)
    )


def _shared_parameter(body: tuple[Stmt, ...], kinds: Kinds, parsed: ParsedFunction) -> Assign | None:
    """A helper's array parameter `h_C = C` that the helper updates in place and never rebinds:
    the caller's array under a second name, which renaming it to `C` removes. (One the helper
    rebinds to a new array before any update stays: its updates change that new array only.)"""
    statements = list(walk_statements(body))
    for binding in statements:
        if not (isinstance(binding, Assign) and binding.shares and kinds.is_array(binding.var)):
            continue
        updates = [s for s in statements if _is_update(s) and s.var == binding.var]
        if not updates:
            continue
        function, param = code(binding.origin.func), binding.shares  # type: ignore[attr-defined]
        if not isinstance(binding.value, cst.Name):
            row = binding.value
            raise _error(
                f"`{function}` updates its argument `{param}` in place (`{_shown(updates[0])}`), and this call "
                f"passes it a row of `{code(row.value)}`, which sourcead does not follow yet",  # type: ignore[attr-defined]
                binding,
                parsed,
                f"Pass `{code(row.value)}` and the index, and update the row there: `{code(row)} += ...`.",  # type: ignore[attr-defined]
            )
        if not any(binding.var in _defines(s) and not _is_update(s) for s in statements if s is not binding):
            return binding
        if not all(_overwritten(binding, u, body) for u in updates):
            raise _error(
                f"`{function}` updates its argument `{param}` in place (`{_shown(updates[0])}`) and also assigns "
                f"`{param}` a new value, which sourcead does not follow yet",
                binding,
                parsed,
                f"Give the new value another name in `{function}` (`{param}2 = {param} * 2.0`).",
            )
    return None


def _overwritten(binding: Assign, update: Assign, body: tuple[Stmt, ...]) -> bool:
    """Is the array `binding` gives its name replaced by a new one before `update` can run (a
    statement of the same block, after it, that makes a new array, and `update` after that)?"""
    block = _block_of(binding, body) or ()
    order = list(walk_statements(body))
    for s in block[block.index(binding) + 1 :] if binding in block else ():
        if isinstance(s, Assign) and s.var == binding.var and not s.writes_element and not s.inplace:
            fresh = not isinstance(s.value, cst.Name) and view_base(s.value) is None
            return fresh and order.index(s) < order.index(update)
    return False


def _block_of(stmt: Stmt, body: tuple[Stmt, ...]) -> tuple[Stmt, ...] | None:
    if stmt in body:
        return body
    for s in body:
        for block in blocks(s):
            found = _block_of(stmt, block)
            if found is not None:
                return found
    return None


def _check(
    s: Assign, body: tuple[Stmt, ...], kinds: Kinds, parsed: ParsedFunction, before: Callable[[Stmt, Stmt], bool]
) -> bool:
    """Does the updated name hold an array bound to another name (`D = C`, a row `r = A[i]`), not
    replaced by a new one since? Then the update is a write both names see: where the name is read
    again, the alias checks of the later passes follow it (reverse mode refuses it at `D = C`,
    forward mode runs both names on one tangent); where it is not, nothing would carry its
    derivative to the other name, and it is refused here."""
    defs = [t for t in walk_statements(body) if isinstance(t, Assign) and s.var in _defines(t) and not _is_update(t)]
    reaching = [t for t in defs if before(t, s) and not _overwritten(t, s, body) and _names_another(t, kinds)]
    if not reaching:
        return False
    if any(s.var in values_read(r, swaps=True) for r in walk_statements(body) if r is not s and before(s, r)):
        return True
    for t in reaching:
        written = parsed.locate(t.origin)
        if isinstance(t.value, cst.Name) and kinds.is_array(t.value.value):
            shown = written.source_line.split("#")[0].strip() if written else f"{code(t.target)} = {code(t.value)}"
            raise _error(
                f"`{_shown(s)}` updates an array in place that another name holds too (`{shown}`), "
                "which sourcead does not follow yet",
                s,
                parsed,
                f"Make a separate array with `.copy()`, or update `{code(t.value)}`.",
            )
        viewed = view_base(t.value)
        if viewed is not None:
            base, what = viewed
            made_here = written is not None and not isinstance(t.origin, cst.For)  # not a `for row in A` row
            how = f"`{code(t.value)} += ...`" if made_here else f"`for i in range(len({base})): {base}[i] += ...`"
            raise _error(
                f"`{_shown(s)}` updates `{s.var}` in place, a view of `{base}` ({what}), which sourcead "
                "does not follow yet",
                s,
                parsed,
                f"Update `{base}` itself ({how}), or make a separate array with `.copy()`.",
            )
    return True


def _names_another(t: Assign, kinds: Kinds) -> bool:
    """Does `t` bind its name to another name's array, or a view of it?"""
    return isinstance(t.value, cst.Name) and kinds.is_array(t.value.value) or view_base(t.value) is not None


def _check_parallel(loop: For, writes: set[Assign], parsed: ParsedFunction) -> None:
    """Refuse an update of all of an array that other code sees, in every iteration of a prange
    loop: the iterations would race (numba makes `acc += B` into a local array a reduction, which
    stays one: `lower_inplace`)."""
    inside = list(walk_statements(loop.body))
    own = {t.var for t in inside if isinstance(t, Assign) and not t.writes_element and not t.inplace}
    for s in inside:
        if isinstance(s, Assign) and s in writes and s.var not in own:
            raise _error(
                f"`{_shown(s)}` updates all of `{s.var}` in every iteration of a prange loop, which "
                "sourcead does not support (the iterations would race)",
                s,
                parsed,
                "Accumulate into a local array (`acc = np.zeros_like(...)`, `acc += ...`) and add it after "
                "the loop, or use range.",
            )


def _error(message: str, s: Assign, parsed: ParsedFunction, hint: str) -> SourceADError:
    """At the user's line of `s` (a helper's own file and line where `s` came from a helper)."""
    return SourceADError(message, s.where or parsed.locate(s.origin) or parsed.locate(parsed.node), hint)


def _is_update(s: Stmt) -> TypeGuard[Assign]:
    """An in-place update (`C += B`), not yet lowered."""
    return isinstance(s, Assign) and s.inplace


def _lowered(s: Assign, kinds: Kinds) -> Assign:
    """`C op= e` on an array C that other code sees: all of C's elements written."""
    everything = cst.ensure_type(
        cst.parse_expression(f"{s.var}[{', '.join([':'] * kinds.ndim(s.var))}]"), cst.Subscript
    )
    if s.accumulate is not None and s.var not in names_in(s.value):
        return replace(s, target=everything, inplace=False)
    value: cst.BaseExpression
    if s.accumulate is not None:  # `C += C * B` once a helper's parameter became the caller's C
        value = cst.BinaryOperation(cst.Name(s.var), _SIGN[s.accumulate](), paren(s.value))
    elif isinstance(s.value, cst.BinaryOperation):  # the array as it is now, after what a call on the right wrote
        value = s.value.with_changes(left=cst.Name(s.var))
    else:  # a write through a mask (frontend/masks.py): np.where(mask_of(m, C, v), new, C) reads C itself
        value = s.value
    return replace(s, target=everything, value=value, accumulate=None, inplace=False)


def _shown(s: Assign) -> str:
    """The update as the user wrote it (`C *= 1.2`), in a helper too (where its names are renamed)."""
    return s.where.source_line.split("#")[0].strip() if s.where is not None else code(s.origin).strip()


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
