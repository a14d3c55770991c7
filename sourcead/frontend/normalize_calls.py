"""Part of the pass `normalize` (see `normalize.py`): calls to primitives, in canonical form.

Decides how a call is written the one way its primitive declares (`rules/`): a method becomes a
call (`x.sum(axis=1)` -> `np.sum(x, axis=1)`), required arguments go by position and optional ones
by keyword in the signature's order, `keepdims=True` becomes `np.expand_dims`, a variadic call
folds (`max(a, b, c)` -> `max(max(a, b), c)`), and a primitive that lowers is rewritten into
others (`np.mean(a, axis=k)` -> a sum), its operands read twice bound to temporaries first.
A call to a user function is inlined (`Normalizer.inline`, in `normalize.py`).
"""

from __future__ import annotations

import libcst as cst

from ..ir.core import Assign, Return, Stmt
from ..ir.exprs import is_cheap, paren, unparen
from ..rules import METHOD_TABLE, Bound, bind, is_literal, primitive
from .normalize_expressions import Expressions, Flat
from .resolve import canonical_call, canonical_func_node, dtype_name, inlined_call, user_function


class Calls(Expressions):
    """Calls: a primitive's canonical call, or a user function's body inlined."""

    def inline(self, func, call: cst.Call) -> tuple[list[Stmt], Return]:
        """The body of a user function bound to the call's arguments (`Normalizer.inline`)."""
        raise NotImplementedError

    def call(self, node: cst.Call, result_used: bool = True) -> Flat:
        func = user_function(node.func, self.parsed.globals)
        if func is not None:
            rewritten = inlined_call(node, self.parsed.globals)
            if rewritten is not node:
                self.parsed.carry(node, rewritten)  # errors at the call name the user's line
            body, ret = self.inline(func, rewritten)
            if not ret.values:
                if result_used:
                    raise self.fail(f"{func.__name__} returns nothing; its result is used here", node)
                return body, cst.Name("None")
            if ret.is_tuple:
                return body, cst.Tuple([cst.Element(v) for v in ret.values])
            return body, ret.values[0]
        key = canonical_call(node.func, self.parsed.globals)
        if key is None:  # a method: x.sum(axis=1) is np.sum(x, axis=1)
            method = METHOD_TABLE[node.func.attr.value]  # type: ignore[attr-defined]
            receiver = node.func.value  # type: ignore[attr-defined]
            args = [cst.Arg(receiver), *node.args]
            bound = bind(method.signature, args, method.name, node, lambda e: True)
            key = method.primitive
            if bound.collected:  # x.reshape(2, 3) -> np.reshape(x, (2, 3))
                shape = cst.Tuple([cst.Element(e) for e in bound.collected])
                bound = Bound({**bound.args, "newshape": shape})
        else:
            prim = primitive(key)
            bound = bind(prim.signature, list(node.args), key, node, lambda e: True)  # type: ignore[union-attr]
        if key.startswith(("custom.", "nested.")):  # bound in the module header
            self.custom.add(key)
        sequence = bound.get("arrays")
        if isinstance(sequence, cst.List):  # np.concatenate([a, b]) reads as np.concatenate((a, b))
            bound = Bound({**bound.args, "arrays": cst.Tuple(sequence.elements)})
        return self.primitive_call(key, bound, node)

    def primitive_call(self, key: str, bound: Bound, node: cst.Call) -> Flat:
        """The canonical call: required arguments by position, optional ones by keyword, in the
        order of the signature, each in Python's evaluation order."""
        prim = primitive(key)
        assert prim is not None
        if prim.variadic:
            pre, operands = self.sequence(list(bound.operands))
            folded = operands[0]
            for operand in operands[1:]:  # max(a, b, c) is max(max(a, b), c): the first maximum wins
                folded = cst.Call(canonical_func_node(key), [cst.Arg(folded), cst.Arg(operand)])
            return pre, folded
        if "keepdims" in bound.args:
            return self.keep_dims(key, bound, node)
        params = [p for p in prim.signature.params if p.name in bound.args and p.name != "dtype"]
        pre, values = self.arguments(params, bound)
        if "dtype" in bound.args:  # not a value: np.float64, or `x.dtype` of a variable
            params.append(next(p for p in prim.signature.params if p.name == "dtype"))
            values.append(self.dtype(bound.args["dtype"], node))
        if key == "len" and isinstance(values[0], cst.Tuple):
            return pre, cst.Integer(str(len(values[0].elements)))
        args = []
        for p, value in zip(params, values, strict=True):
            if p.required:
                args.append(cst.Arg(value))
            else:
                args.append(cst.Arg(value, keyword=cst.Name(p.name), equal=_EQUAL))
        call = cst.Call(canonical_func_node(key), args)
        lowers = prim.lower is not None and prim.lower(Bound(dict(zip((p.name for p in params), values, strict=True))))
        if lowers is not None and lowers is not False:  # then again, with operands read twice bound first
            values = [self.lowered_operand(v, pre) if p.required else v for p, v in zip(params, values, strict=True)]
            assert prim.lower is not None
            lowered = prim.lower(Bound({p.name: v for p, v in zip(params, values, strict=True)}))
            if lowered is not None:  # parenthesized: it stands where a call stood (`np.mean(a, axis=0) ** 2`)
                return pre, paren(lowered)
        return pre, call

    def arguments(self, params: list, bound: Bound) -> tuple[list[Stmt], list[cst.BaseExpression]]:
        """The arguments' values left to right; a sequence written in the call (`np.concatenate((a,
        b))`) stays a tuple of its elements' values."""
        nodes = [bound.args[p.name] for p in params]
        names = [p.name for p in params]
        if "arrays" not in names or not isinstance(bound.args["arrays"], cst.Tuple):
            return self.sequence(nodes)
        k = names.index("arrays")
        items = [e.value for e in bound.args["arrays"].elements]
        pre, flat = self.sequence(nodes[:k] + items + nodes[k + 1 :])
        joined = cst.Tuple([cst.Element(v) for v in flat[k : k + len(items)]])
        return pre, [*flat[:k], joined, *flat[k + len(items) :]]

    def lowered_operand(self, value: cst.BaseExpression, pre: list[Stmt]) -> cst.BaseExpression:
        """An operand of a call that normalize rewrites (np.var(a) reads a twice): a temporary unless
        it is cheap to read again."""
        if is_cheap(value) or isinstance(value, cst.Tuple):  # a join reads each array of its tuple once
            return value
        temp = cst.Name(self.namer.fresh("operand"))
        pre.append(Assign(temp, unparen(value), None, self.current))
        return temp

    def keep_dims(self, key: str, bound: Bound, node: cst.Call) -> Flat:
        """`np.sum(a, axis=k, keepdims=True)` is `np.expand_dims(np.sum(a, axis=k), k)`."""
        from ..rules import literal

        keep = literal(bound.args["keepdims"])
        inner = Bound({k: v for k, v in bound.args.items() if k != "keepdims"})
        if keep is False:
            return self.primitive_call(key, inner, node)
        axis = inner.args.get("axis")
        if keep is not True or axis is None or not isinstance(literal(axis), int):
            raise self.fail(
                "keepdims=True is supported with an integer axis=... here",
                node,
                "Without an axis the result is a number: use it as it is.",
            )
        pre, value = self.primitive_call(key, inner, node)
        return pre, cst.Call(canonical_func_node("np.expand_dims"), [cst.Arg(value), cst.Arg(axis)])

    def dtype(self, value: cst.BaseExpression, node) -> cst.BaseExpression:
        """The canonical dtype: np.float64 for np.float64 and float (np.int64, np.bool_ alike), or
        `x.dtype` of the variable x (renamed as the function is inlined)."""
        canonical = dtype_name(value, self.parsed.globals)
        if canonical is not None:
            return cst.parse_expression(canonical)
        if isinstance(value, cst.Attribute) and value.attr.value == "dtype" and isinstance(value.value, cst.Name):
            pre, array = self.flat(value.value)
            if not pre and isinstance(array, cst.Name):
                return value.with_changes(value=array)
        if is_literal(value):
            return value
        raise self.fail(
            "dtype= must be np.float64, float, np.float32, np.int64, int, np.bool_, bool or `x.dtype` of a variable x "
            "here",
            value,
            "Write dtype=np.float64 (or the dtype of an argument array: dtype=x.dtype).",
        )


_EQUAL = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
