"""Dead-code elimination over a generated function (the gradient-only variant, `reverse/sweeps.py`).

`grad(f)` returns the gradient alone, so the primal statements that only compute `f`'s value are
dead: nothing the reverse sweep reads depends on them. A backward liveness analysis over the
generated statements (loops to their fixed point; `break` sees the loop's exit, `continue` its
head) removes every assignment to a name that no later statement reads, whose value has no
effect, and then every loop and `if` left empty. For the logistic loss, whose prange loop sums
the losses that only the value needs (the reverse sweep replays each iteration's margin itself):

    total = 0.0                                       # forward sweep: only what the reverse
    for i in prange(X.shape[0]):                      # sweep reads (grad does not return the
        z = 0.0                                       # value)
        for j in range(X.shape[1]):
            z += X[i, j] * w[j]               ->
        total += math.log(1.0 + math.exp(-y[i] * z))
    value = total

Kept always: element and attribute writes (tapes, adjoint arrays, the arguments a function
writes), but for the element writes into a fresh array nothing reads but for its shape
(`unread.py`: spmv's and jacobi_1d's forward sweeps computed their outputs only for the shape of
an adjoint's zero), calls that are not declared primitives (runtime helpers may write their arguments),
`raise`, `return`, and anything a kept statement reads. The value of a primitive call has no
effect: numba runs the generated code with NumPy's error model, where `1.0 / 0.0` is inf rather
than an exception (`compile.py`), and a name that a pruned branch assigns is live before the
branch, so every typed placeholder numba needs stays.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import libcst as cst

from ..ir.exprs import children, dotted, names_in, walk
from ..rules import METHOD_TABLE, primitive
from .unread import allocation, unread_arrays, written_array

Live = frozenset[str]
MODULES = ("np", "math")  # the modules whose functions the generated code calls by attribute


def eliminate_dead_code(module: cst.Module, sections: frozenset[str] = frozenset()) -> cst.Module:
    """`module` (holding one generated function) without the function's dead statements; `sections`
    are comments kept wherever their statement goes (`# reverse sweep`)."""
    (definition,) = module.body
    assert isinstance(definition, cst.FunctionDef)
    unread: frozenset[str] = frozenset()
    views = _views(definition)
    while True:  # an array's writes dead may leave another's reads dead: to the fixed point
        definition = _pruned(definition, _Pruner(sections, unread, views))
        found = unread_arrays(definition, is_pure)
        if found <= unread:
            break
        unread = found
        definition = definition.visit(_Allocations(unread))  # type: ignore[assignment]
    return module.with_changes(body=[definition])


def _pruned(definition: cst.FunctionDef, pruner: _Pruner) -> cst.FunctionDef:
    body, _ = pruner.block(_statements(definition.body), frozenset(), _Exits(frozenset(), frozenset()))
    return definition.with_changes(body=definition.body.with_changes(body=body or [_pass()]))


class _Allocations(cst.CSTTransformer):
    """Each binding of an unread array made an allocation (`unread.allocation`)."""

    def __init__(self, unread: frozenset[str]):
        self.unread = unread

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        targets = [t.target for t in updated.targets]
        if len(targets) == 1 and isinstance(targets[0], cst.Name) and targets[0].value in self.unread:
            return updated.with_changes(value=allocation(updated.value))
        return updated


@dataclass(frozen=True)
class _Exits:
    """What is live where a `break` and a `continue` of the innermost loop go."""

    after_break: Live
    at_continue: Live


def _pass() -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([cst.Pass()])


def is_pure(node: cst.CSTNode) -> bool:
    """Evaluating `node` changes nothing but its value: operators, reads, attributes and calls of
    declared primitives (functions and methods); not runtime helpers, custom rules or walruses."""
    for sub in walk(node):
        if isinstance(sub, (cst.NamedExpr, cst.Lambda, cst.Yield, cst.Await)):
            return False
        if isinstance(sub, cst.Call) and not _pure_call(sub):
            return False
    return True


def _pure_call(call: cst.Call) -> bool:
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in METHOD_TABLE and dotted(func.value) not in MODULES:
        return True  # `x.sum()`, `x.copy()`: a method spelling of a primitive
    name = dotted(call.func)
    if name in _PURE_HELPERS:
        return True
    found = primitive(name) if name else None
    return found is not None and not name.startswith("custom.")


# runtime helpers that only compute a value (an array of an operation's shape; matmul_like raises
# as `a @ b` would where sizes differ, which the adjoint's own products check again):
# `zeros_like(matmul_like(a, b))`, the zero adjoint a first contribution now assigns
# (`first_contributions.py`), is dead with its allocation
_PURE_HELPERS = frozenset({"broadcast_like", "matmul_like"})


def _loop_range(node: cst.BaseExpression) -> cst.BaseExpression:
    """What a `for` loop evaluates: the arguments of `range` and `prange`, else its iterable."""
    if isinstance(node, cst.Call) and dotted(node.func) in ("range", "prange"):
        return cst.Tuple([cst.Element(a.value) for a in node.args]) if node.args else cst.Tuple([])
    return node


def _defined(target: cst.BaseExpression) -> tuple[set[str], set[str]] | None:
    """The names an assignment target binds and those it reads (indices, written arrays); None
    when it writes through an element or attribute (an effect)."""
    if isinstance(target, cst.Name):
        return {target.value}, set()
    if isinstance(target, (cst.Tuple, cst.List)):
        bound: set[str] = set()
        for element in target.elements:
            found = _defined(element.value)
            if found is None:
                return None
            bound |= found[0]
        return bound, set()
    return None


class _Pruner:
    """Strong liveness: a statement's reads count only where the statement is kept, so `total +=
    x` in a loop does not keep itself alive. Pruning is the analysis: a loop's body is pruned
    once per step of its fixed point, and the last one is kept."""

    def __init__(
        self, sections: frozenset[str], unread: frozenset[str] = frozenset(), views: frozenset[str] = frozenset()
    ):
        self.sections = sections
        self.unread = unread  # arrays whose element writes are dead (`unread.py`)
        self.views = views  # names bound to another array's elements: `v += e` writes that array

    def block(
        self, statements: Sequence[cst.BaseStatement], live: Live, exits: _Exits
    ) -> tuple[list[cst.BaseStatement], Live]:
        """The statements kept, and what is live before them given `live` after them."""
        pruned: list[cst.BaseStatement | None] = []  # backwards
        for statement in reversed(statements):
            new, live = self.prune(statement, live, exits)
            pruned.append(new)
        return self.comments(statements, pruned[::-1]), live

    def comments(
        self, statements: Sequence[cst.BaseStatement], pruned: list[cst.BaseStatement | None]
    ) -> list[cst.BaseStatement]:
        """The comments leading a removed statement go with it (they say what it does), but for
        section comments (`# reverse sweep`), which move to the next statement kept."""
        kept: list[cst.BaseStatement] = []
        carried: list[cst.EmptyLine] = []
        for original, new in zip(statements, pruned, strict=True):
            if new is None:
                carried += [e for e in _leading_lines(original) if self.is_section(e)]
                continue
            if carried:
                new = new.with_changes(leading_lines=[*carried, *_leading_lines(new)])
                carried = []
            kept.append(new)
        return kept

    def is_section(self, line: cst.EmptyLine) -> bool:
        return line.comment is not None and line.comment.value in self.sections

    def prune(self, statement: cst.BaseStatement, live: Live, exits: _Exits) -> tuple[cst.BaseStatement | None, Live]:
        """The statement without its dead parts (None: all dead) and what is live before it."""
        if isinstance(statement, cst.SimpleStatementLine):
            smalls: list[cst.BaseSmallStatement] = []
            for small in reversed(statement.body):
                if not self.dead(small, live):
                    smalls.append(small)
                    live = self.small_live(small, live, exits)
            return (statement.with_changes(body=smalls[::-1]) if smalls else None), live
        if isinstance(statement, cst.If):
            return self.prune_if(statement, live, exits)
        if isinstance(statement, (cst.For, cst.While)) and statement.orelse is None:
            return self.prune_loop(statement, live)
        return statement, live | names_in(statement)  # anything else: kept whole, reads all it names

    def dead(self, small: cst.BaseSmallStatement, live: Live) -> bool:
        if isinstance(small, cst.Assign):
            return all(self.dead_target(t.target, live) for t in small.targets) and is_pure(small.value)
        if isinstance(small, cst.AugAssign):
            target = small.target
            if isinstance(target, cst.Name) and target.value in self.views:
                return False  # `row += g` on a chunk's row of adjoints: an element write through a view
            in_place = isinstance(target, cst.Name) and target.value in self.unread  # `y += v`: y's elements
            return (in_place or self.dead_target(target, live)) and is_pure(small.value)
        return isinstance(small, cst.Pass)

    def dead_target(self, target: cst.BaseExpression, live: Live) -> bool:
        """Is what `target` binds unread: names not live, or elements of an unread array?"""
        if isinstance(target, cst.Subscript):
            return written_array(target) in self.unread and is_pure(target)
        bound = _defined(target)
        return bound is not None and not (bound[0] & live)

    def small_live(self, small: cst.BaseSmallStatement, live: Live, exits: _Exits) -> Live:
        """What is live before a statement kept."""
        if isinstance(small, cst.Break):
            return exits.after_break
        if isinstance(small, cst.Continue):
            return exits.at_continue
        if isinstance(small, cst.Return):
            return frozenset(names_in(small.value)) if small.value is not None else frozenset()
        if isinstance(small, cst.Assign):
            for target in reversed(small.targets):
                found = _defined(target.target)
                live = live - found[0] if found is not None else live | names_in(target.target)
            return live | names_in(small.value)
        if isinstance(small, cst.AugAssign):
            return live | names_in(small.target) | names_in(small.value)
        return live | names_in(small)

    def prune_if(self, statement: cst.If, live: Live, exits: _Exits) -> tuple[cst.If | None, Live]:
        body, body_live = self.block(_statements(statement.body), live, exits)
        orelse, orelse_live = self.prune_orelse(statement.orelse, live, exits)
        if not body and orelse is None and is_pure(statement.test):
            return None, live
        new = statement.with_changes(body=statement.body.with_changes(body=body or [_pass()]), orelse=orelse)
        return new, live_union(names_in(statement.test), body_live, orelse_live)

    def prune_orelse(
        self, orelse: cst.If | cst.Else | None, live: Live, exits: _Exits
    ) -> tuple[cst.If | cst.Else | None, Live]:
        if orelse is None:
            return None, live
        if isinstance(orelse, cst.If):
            return self.prune_if(orelse, live, exits)
        body, body_live = self.block(_statements(orelse.body), live, exits)
        return (orelse.with_changes(body=orelse.body.with_changes(body=body)) if body else None), body_live

    def prune_loop(self, loop: cst.For | cst.While, after: Live) -> tuple[cst.BaseStatement | None, Live]:
        """Live at the head of an iteration: what is live after the loop (no further iteration),
        the test, and what the kept body reads before it binds it; to the least fixed point."""
        bound = _defined(loop.target) if isinstance(loop, cst.For) else (set(), set())
        header = _loop_range(loop.iter) if isinstance(loop, cst.For) else loop.test
        test = frozenset(names_in(loop.test)) if isinstance(loop, cst.While) else frozenset()
        names = bound[0] if bound is not None else set()
        head = after | test
        while True:
            body, body_live = self.block(_statements(loop.body), head, _Exits(after, head))
            new = after | test | (body_live - names)
            if new == head:
                break
            head = new
        if not body and is_pure(header) and bound is not None and not (names & after):
            return None, after
        return loop.with_changes(body=loop.body.with_changes(body=body or [_pass()])), head | names_in(header)


def live_union(*parts: set[str] | Live) -> Live:
    return frozenset().union(*parts)


__all__ = ["eliminate_dead_code", "is_pure"]


def _statements(suite: cst.BaseSuite) -> Sequence[cst.BaseStatement]:
    """The statements of a block (the generated code writes every block indented)."""
    assert isinstance(suite, cst.IndentedBlock)
    return suite.body


def _leading_lines(statement: cst.BaseStatement) -> Sequence[cst.EmptyLine]:
    """The comment and blank lines before a statement (a simple line's or a compound statement's)."""
    assert isinstance(statement, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
    return statement.leading_lines


def _views(definition: cst.FunctionDef) -> frozenset[str]:
    """The names some assignment binds to an array's elements (`x_bar_mine = x_bar_rows[chunk]`, a
    parallel adjoint's chunk row): an in-place `+=` on one writes that array, and is never dead."""
    return frozenset(
        t.target.value
        for node in _small_statements(definition)
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.Subscript)
        for t in node.targets
        if isinstance(t.target, cst.Name)
    )


def _small_statements(node: cst.CSTNode) -> Iterator[cst.BaseSmallStatement]:
    """The simple statements under `node`, not descending into expressions (a walk of every node
    was an eighth of hvp's passes)."""
    if isinstance(node, cst.SimpleStatementLine):
        yield from node.body
        return
    for child in children(node):
        if not isinstance(child, cst.BaseExpression):
            yield from _small_statements(child)
