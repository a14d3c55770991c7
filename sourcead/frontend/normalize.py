"""The pass `normalize`: the fenced libcst function becomes the core form (`sourcead.core`).

- Every call is written the one way its primitive declares (`rules/`): methods become calls
  (`x.sum(axis=1)` -> `np.sum(x, axis=1)`), optional arguments become keywords, spellings become
  canonical names (`sin(x)` with `from math import sin` -> `math.sin(x)`), and some calls are
  lowered into others (`max(a, b, c)` -> `max(max(a, b), c)`, `np.mean(a, axis=k)` -> a sum).
- Expressions keep Python's evaluation order: a call to a user function is inlined where Python
  would run it, and a value read before it (left of it) that it may change is saved first.
- Tuples are scalarized: `p = (a, b)` gives the variables `p_0`, `p_1`; `p[0]` reads `p_0`; a
  function returning a tuple fills them; `n, m = A.shape` reads each size.
- `a += e` stays an explicit accumulation when `e` does not read `a`, else becomes `a = a + (e)`;
  `*=`, `/=` and `**=` become plain assignments.
- `range(n)` gets explicit start and step; loop bounds that the loop body reassigns are hoisted
  into fresh variables, so the reversed loop can re-read them.
- A conditional expression becomes an if statement that sets a fresh variable, so only the
  chosen branch runs (and is differentiated); so does `a and f(x)` when `f(x)` has effects.
- `a, b = b, a` on names is a `Permute`; other tuple assignments go through fresh variables
  where a target is read by a later value.
- `break`, `continue` and `return` anywhere become flags (`exits.py`), leaving one exit.
- The caller's arrays the function writes are followed through rebindings and swaps (`outputs.py`).

The normalizer is built in parts, one job each: `normalize_expressions.py` (expressions, and the
state the parts share), `normalize_calls.py` (calls to primitives), `normalize_statements.py`
(statements and assignments); this module drives them over a function and inlines the calls to
user functions (a `Normalizer` of each callee, its names made fresh).
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst
import numpy as np

from ..ir.core import Assign, CoreFunction, Return, Stmt, walk_statements
from ..ir.exprs import Rename
from ..ir.naming import Namer, reserved_names
from ..rules import bind
from .bound_names import assigned_in, local_names
from .exits import eliminate_exits
from .fence import fence
from .loopvars import carry_loop_variables
from .normalize_statements import Statements
from .outputs import written_outputs
from .parameters import base_name, is_place, is_shared, updated_in_place, writes_elements
from .parse import ParsedFunction, carried_positions, parse_function, unwrap
from .rings import modulo_rings


def normalize(parsed: ParsedFunction, namer: Namer) -> CoreFunction:
    """The core form of a fenced function. User names that generated code needs for itself (a
    local called `np`, a parameter called `reserve`) are renamed first."""
    clashes = sorted(local_names(parsed.node) & reserved_names())
    if clashes:
        mapping = {name: namer.fresh(name) for name in clashes}
        renamed = parsed.node.visit(Rename({k: cst.Name(v) for k, v in mapping.items()}, params=True))
        core = Normalizer(replace(parsed, node=renamed), namer).function()  # type: ignore[arg-type]
        by_new = {v: k for k, v in mapping.items()}
        return replace(core, arg_names=tuple(by_new.get(p, p) for p in core.params))
    return Normalizer(parsed, namer).function()


class Normalizer(Statements):
    """The normalizer of one function: its parts' statements over its body, then the passes
    of the front end that follow (exits, loop variables, rings, outputs)."""

    def function(self) -> CoreFunction:
        statements = list(self.parsed.node.body.body)
        body, ret = eliminate_exits(self.block(statements), self.namer, self.parsed)
        body = carry_loop_variables(body, ret, self.namer, self.fail)
        body = modulo_rings(body, self.namer, self.parsed)
        self.refuse_global_writes(body)
        body, mutated, finals = written_outputs(body, self.params, self.namer, self.fail)
        return CoreFunction(
            name=self.parsed.name,
            params=self.params,
            body=body,
            ret=ret,
            constants=tuple(sorted(self.constants.items())),
            mutated=mutated,
            finals=finals if finals != mutated else (),
            custom=tuple(sorted(self.custom)),
        )

    def refuse_global_writes(self, body: tuple[Stmt, ...]) -> None:
        """A frozen global array is a constant of the generated module (as numba makes it one):
        writing it would change a copy the user never sees."""
        for s in walk_statements(body):
            if isinstance(s, Assign) and s.writes_element and s.var in self.constants:
                raise self.fail(
                    f"`{s.var}` is a global array: numba freezes it as a constant, so it cannot be written",
                    s.origin,
                    f"Pass `{s.var}` as an argument, or write into a copy: `{s.var.lower()}_work = {s.var}.copy()`.",
                )

    # --- calls to user functions ---------------------------------------------------------------

    def at_the_call(self, func, callee: ParsedFunction, renamed: cst.CSTNode, call: cst.Call, positions: dict):
        """A lowered call's helper (`api/lowering.py`, generated): its nodes located at the user's
        call, so that an error about them (second order of a derivative call) names the user's line."""
        where = self.parsed._owner(call) if getattr(func, "__sourcead_lowered__", False) else None
        if where is None:
            return callee, positions
        owner, code_range = where
        stack: list[cst.CSTNode] = [callee.node, renamed]
        found: dict = {}
        while stack:
            node = stack.pop()
            found[node] = code_range
            stack.extend(node.children)
        return replace(callee, filename=owner.filename, lines=owner.lines), found

    def inline(self, func, call: cst.Call) -> tuple[list[Stmt], Return]:
        """The body of a user function, its names made fresh, its parameters bound to the arguments.

        We inline rather than emit the callee beside the caller: activity and the tape then see
        through the call, and numba compiles one function with no tape passed between functions.
        The arguments are evaluated first, left to right, as Python does.
        """
        if func in self.callers or func is _function_of(self.parsed):
            raise self.fail(
                f"recursive call to {func.__name__}", call, "sourcead inlines calls; write the recursion as a loop."
            )
        callee = parse_function(func)
        fence(callee, callee=True)
        params = list(callee.node.params.params)
        names = [p.name.value for p in params]
        try:
            bound = bind(_signature_of(callee.node), list(call.args), func.__name__, call, lambda e: True)
        except Exception as exc:  # BindError: say it at the call
            raise self.fail(str(exc), call, f"{func.__name__} takes ({', '.join(names)}).") from None
        given = [p for p in params if p.name.value in bound.args]
        pre, values = self.sequence([bound.args[p.name.value] for p in given])
        supplied = dict(zip((p.name.value for p in given), values, strict=True))
        reassigned = assigned_in(callee.node.body)
        writes_arrays = writes_elements(callee.node.body)
        updated = updated_in_place(callee.node.body, names, supplied)
        mapping: dict[str, cst.BaseExpression] = {}
        for param in params:
            name = param.name.value
            arg = supplied.get(name, param.default)
            if arg is None:  # fenced: a parameter without default that the call did not pass
                raise self.fail(f"{func.__name__} needs its argument `{name}`", call)
            writes = writes_arrays or isinstance(arg, cst.Subscript) and base_name(arg) in updated  # `h(A[0], A)`
            if name not in reassigned and is_place(arg, reassigned, writes):
                mapping[name] = arg  # the caller's variable, element or tuple itself (arrays by reference)
            elif is_shared(arg):  # the caller's value, array or row: `inplace.py` decides which
                mapping[name] = fresh = cst.Name(self.namer.fresh(f"{func.__name__}_{name}"))
                pre.append(Assign(fresh, arg, None, call, shares=name, where=self.parsed.locate(call)))
            else:
                local = self.namer.fresh(f"{func.__name__}_{name}")
                pre += self.assign(cst.Name(local), arg, call)
                mapping[name] = self.name(cst.Name(local))  # a tuple parameter: the tuple of its elements
        for local in sorted(local_names(callee.node) - set(names)):
            mapping[local] = cst.Name(self.namer.fresh(f"{func.__name__}_{local}"))
        renamed = cst.ensure_type(callee.node.visit(Rename(mapping)), cst.FunctionDef)
        positions = {**callee.positions, **carried_positions(callee.node, renamed, callee.positions)}
        callee, positions = self.at_the_call(func, callee, renamed, call, positions)
        inner = self.parsed.adopt(replace(callee, node=renamed, positions=positions))  # later errors locate its nodes
        core = Normalizer(inner, self.namer, (*self.callers, _function_of(self.parsed))).function()
        for name, value in core.constants:
            if not _same_constant(self.constants.get(name, value), value):
                raise self.fail(f"global `{name}` has different values in the caller and in {func.__name__}", call)
            self.constants[name] = value
        self.custom.update(core.custom)
        return pre + list(core.body), core.ret


def _signature_of(node: cst.FunctionDef):
    from ..rules import Signature

    parts = [p.name.value if p.default is None else f"{p.name.value}=" for p in node.params.params]
    return Signature.parse(", ".join(parts))


def _function_of(parsed: ParsedFunction):
    """The function object of a parsed function, found by name in its globals (for recursion checks)."""
    obj = parsed.globals.get(parsed.name)
    return unwrap(obj) if obj is not None else None


def _same_constant(a: object, b: object) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    return a == b
