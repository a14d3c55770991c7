"""`sourcead.runtime.HELPERS` against the code that names helpers, in both directions.

HELPERS (the names generated code may import: the namer keeps user variables off them, `emit`
writes the import line from them) is the union of the runtime modules' `__all__`. A helper is
named in three places: the primitive declarations under `rules/` (`Primitive.helpers`, and the
templates of their derivatives), the compiler's emitters (`helpers.add("reserve")`, a call written
into an f-string) and the generated modules themselves (the goldens' import lines). Every name
those use must be a helper the runtime has, and every helper the runtime exports must be used by
one of them: neither a declaration of a missing helper nor a helper nobody calls.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from numba import prange

import sourcead as ad
from sourcead import rules, runtime
from sourcead.ir.naming import BUILTINS

PACKAGE = Path(runtime.__file__).parent.parent
GOLDEN = Path(__file__).parent / "golden"
CALL = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\(")  # a bare call, not a method or module attribute
IMPORT = re.compile(r"^from sourcead\.runtime import (.+)$", re.M)


def _strings(value: object) -> Iterator[str]:
    """Every string inside a derivative form (dataclasses of strings and tuples of strings)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, tuple | list):
        for item in value:
            yield from _strings(item)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            yield from _strings(getattr(value, field.name))


def _literals(tree: ast.AST) -> Iterator[str]:
    """The string constants of code (f-string pieces included), docstrings left out."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.value


def _source_literals(func: object) -> Iterator[str]:
    source = textwrap.dedent(inspect.getsource(func))  # type: ignore[arg-type]
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a lambda inside a longer expression: its line alone
        tree = ast.parse(source.strip().rstrip(",)"), mode="eval")
    yield from _literals(tree)


def _calls(texts: Iterator[str]) -> set[str]:
    return {name for text in texts for name in CALL.findall(text)}


def derivative_calls(prim: rules.Primitive) -> set[str]:
    """The functions a primitive's derivative calls by bare name: its forms, its `shape_like`
    and the forms its `special` returns for literal arguments."""
    texts = [*_strings(prim.derivative), *_strings(prim.shape_like)]
    if prim.special is not None:
        texts.extend(_source_literals(prim.special))
    return _calls(iter(texts))


def lowered_calls(prim: rules.Primitive) -> set[str]:
    """The functions normalize's rewrite of a call (`Primitive.lower`) calls by bare name."""
    return _calls(_source_literals(prim.lower)) if prim.lower is not None else set()


def declared() -> dict[str, set[str]]:
    """Helper name -> the primitives whose declarations name it."""
    found: dict[str, set[str]] = {}
    for name, prim in rules.PRIMITIVES.items():
        for helper in {*prim.helpers, *derivative_calls(prim), *lowered_calls(prim)} - BUILTINS:
            found.setdefault(helper, set()).add(name)
    return found


def compiler_trees() -> Iterator[tuple[Path, ast.Module]]:
    """The compiler's modules: everything but the runtime itself and the rules (declarations)."""
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).parts[0] not in ("runtime", "rules"):
            yield path, ast.parse(path.read_text())


def emitted_by_name() -> dict[str, set[str]]:
    """Helper name -> the compiler modules that ask for it (`helpers.add("reserve")`,
    `helpers.update({...})`): the names an emitter imports explicitly."""
    found: dict[str, set[str]] = {}
    for path, tree in compiler_trees():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("add", "update")
                and ast.unparse(node.func.value).endswith("helpers")
            ):
                for arg in node.args:
                    for text in _literals(arg):
                        found.setdefault(text, set()).add(path.name)
    return found


def emitted_text() -> str:
    """Every string the compiler writes (code it emits), one a line."""
    return "\n".join(text for _, tree in compiler_trees() for text in _literals(tree))


def golden_imports() -> dict[str, set[str]]:
    """Helper name -> the golden files whose generated module imports it."""
    found: dict[str, set[str]] = {}
    for path in sorted(GOLDEN.glob("*.py")):
        for line in IMPORT.findall(path.read_text()):
            for name in line.split(","):
                found.setdefault(name.strip(), set()).add(path.name)
    return found


def test_helpers_are_the_union_of_the_runtime_modules_declarations():
    modules = [m for m in vars(runtime).values() if inspect.ismodule(m) and m.__name__.startswith("sourcead.runtime.")]
    declared_there = {name for m in modules for name in getattr(m, "__all__", ())}
    assert set(runtime.HELPERS) == declared_there
    assert len(runtime.HELPERS) == len(set(runtime.HELPERS)), "a helper declared by two modules"
    for name in runtime.HELPERS:
        assert callable(getattr(runtime, name, None)), f"sourcead.runtime.{name} is not importable"


@pytest.mark.parametrize("name", sorted(rules.PRIMITIVES))
def test_a_derivative_calls_only_the_helpers_it_declares(name):
    prim = rules.PRIMITIVES[name]
    undeclared = derivative_calls(prim) - set(prim.helpers) - BUILTINS
    assert not undeclared, f"{name}'s derivative calls {sorted(undeclared)}: list them in its `helpers`"


def test_every_helper_a_declaration_names_is_in_the_runtime():
    missing = {helper: sorted(prims) for helper, prims in declared().items() if helper not in runtime.HELPERS}
    assert not missing, f"declared under rules/ but not exported by sourcead.runtime: {missing}"


def test_every_helper_an_emitter_asks_for_is_in_the_runtime():
    asked = emitted_by_name()
    assert "reserve" in asked  # the scan sees the emitters (forward_sweep.py asks for it)
    missing = {helper: sorted(where) for helper, where in asked.items() if helper not in runtime.HELPERS}
    assert not missing, f"asked for by the compiler but not exported by sourcead.runtime: {missing}"


def test_every_helper_a_golden_imports_is_in_the_runtime():
    imports = golden_imports()
    assert len(imports) > 20  # the goldens were found
    missing = {helper: sorted(where)[:3] for helper, where in imports.items() if helper not in runtime.HELPERS}
    assert not missing, f"generated modules import helpers sourcead.runtime lacks: {missing}"


def test_every_helper_is_declared_or_emitted():
    """A helper of the runtime that no declaration names and no emitter writes is dead code (or a
    declaration lost): generated code would never import it."""
    names = set(declared()) | set(emitted_by_name())
    text = emitted_text()
    unused = [
        helper
        for helper in runtime.HELPERS
        if helper not in names and not re.search(rf"(?<![\w.]){helper}\(|^{helper}$", text, re.M)
    ]
    assert not unused, f"sourcead.runtime exports helpers that nothing declares or emits: {unused}"


def _diffusion_named_like_helpers(u0, kappa, n_steps):
    # diffusion_rows (parallel_kernels.py) with locals named as the helpers of a parallel adjoint
    n = u0.shape[0]
    m = u0.shape[1]
    u = u0.copy()
    v = u0.copy()
    chunk_zeros = 0.5 * kappa
    for _step in range(n_steps):
        for i in prange(1, n - 1):
            for add_chunk_rows in range(1, m - 1):
                j = add_chunk_rows
                v[i, j] = u[i, j] + chunk_zeros * (
                    u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j]
                )
        u, v = v, u
    s = 0.0
    for i in range(n):
        for j in range(m):
            s += u[i, j] * u[i, j]
    return 0.5 * s


def test_user_variables_named_as_parallel_adjoint_helpers_are_renamed():
    """`chunk_zeros` and `add_chunk_rows`, which a parallel loop's adjoint imports, were missing
    from the hand-kept HELPERS: a user's variable of that name shadowed the import (TypeError)."""
    rng = np.random.default_rng(3)
    u0, kappa = rng.standard_normal((5, 4)), 0.1
    g_u0, g_kappa = ad.grad(_diffusion_named_like_helpers, wrt=(0, 1), jit=False)(u0, kappa, 2)
    h = 1e-6
    fd = (_diffusion_named_like_helpers(u0, kappa + h, 2) - _diffusion_named_like_helpers(u0, kappa - h, 2)) / (2 * h)
    assert g_kappa == pytest.approx(fd, rel=1e-6)
    e = np.zeros_like(u0)
    e[2, 1] = h
    fd_u = (_diffusion_named_like_helpers(u0 + e, kappa, 2) - _diffusion_named_like_helpers(u0 - e, kappa, 2)) / (2 * h)
    assert g_u0[2, 1] == pytest.approx(fd_u, rel=1e-6)
