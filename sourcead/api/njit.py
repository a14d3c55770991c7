"""`g.njit`: a prepared derivative as a numba dispatcher, callable from the user's own
`@numba.njit` code with no Python in between.

numba calls one dispatcher from another when the callee is a global of the caller's module. So
for each prepared variant we write a small *entry module*, as source, beside the generated
module in the disk cache, and import it like the compiler does (content-addressed name,
registered in `sys.modules` before numba sees it): numba's disk cache then works for it too. Its
one function does in compiled code what the Python wrapper of `prepared.py` does: checks and converts
the arguments (`runtime/njit.py`), copies the arguments the function writes (and refuses one
that shares memory with another array argument), seeds 1.0 for a gradient, passes zero
cotangents for written arguments and the row count of per-thread adjoints, and unpacks:

| transform                 | `.njit` takes              | and returns                                   |
|---------------------------|----------------------------|-----------------------------------------------|
| `grad(f, wrt)`            | `(*args)`                  | what `g(*args)` returns: gradient(s)          |
| `value_and_grad(f, wrt)`  | `(*args)`                  | `(value, gradient(s))`                        |
| `vjp(f, wrt)`             | `(*args, cotangent)`       | `(value, gradient(s))`                        |
| `jvp(f, wrt)`             | `(*args, tangents)`        | `(value, value_tangent)`                      |
| `@differentiable` `f`     | `(*args)`                  | what `f(*args)` returns (the compiled primal) |

A caller compiled with `@numba.njit(cache=True)` is cached by numba under its own file only: when
the derivative it calls changes (the function was edited, or sourcead upgraded), numba would load
the old machine code naming the old entry module. sourcead refuses that import with a message
saying which cache to delete (`build/modules.py`, `_UnbuiltModuleFinder`); without `cache=True` nothing is stale.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

from ..build import compile as _compile
from ..build.callplan import _text, shape_check_source
from ..build.jit import bounds_checked, compiled_parallel, jit_module, jitted_name
from ..errors import SourceADError
from ..ir.types import parse_spec
from .protocol import Prepared, _Variant

if TYPE_CHECKING:
    from numba.core.dispatcher import Dispatcher

_HELPERS = (
    "array_arg", "bool_arg", "check_disjoint", "check_distinct", "float_arg", "int_arg", "seed_arg", "seed_shape",
    "tangent_arg", "tuple_arg",
)  # fmt: skip
_LOCK = threading.Lock()
_ENTRIES: dict[str, Dispatcher] = {}  # entry module text -> dispatcher, for this process


_ENTRY_TRANSFORMS = ("grad", "value_and_grad", "vjp", "jvp", "primal")  # what an entry module can do


def transform_of(prepared: Prepared) -> str:
    """grad, value_and_grad, vjp, jvp or primal: as the object's recipe says."""
    transform = prepared.__sourcead_recipe__().transform
    if transform not in _ENTRY_TRANSFORMS:
        raise TypeError(f"no .njit entry for a prepared {transform}: {type(prepared).__name__}")
    return transform


def dispatcher(prepared: Prepared, variant: _Variant) -> Dispatcher:
    """The numba dispatcher of the `.njit` entry for one variant of a prepared transform."""
    transform = transform_of(prepared)
    # the kinds of the parameters that take theirs from the call: the variant's key in the memo
    core_module = _core_dispatcher(variant)
    text, entry = entry_source(variant, transform, prepared.__sourcead_recipe__().single, core_module)
    found = _ENTRIES.get(text)
    if found is None:
        with _LOCK:
            found = _ENTRIES.get(text)
            if found is None:
                found = _ENTRIES[text] = jit_module(_compile.companion(entry, text), entry)
    return found


def _core_dispatcher(variant: _Variant) -> str:
    """The generated module's name, once its dispatcher exists (also for a `jit=False` object:
    `.njit` is compiled code by definition)."""
    compiled = variant.compiled
    module = _compile.loaded(compiled.path.stem)
    if module is None:  # not possible after `load`; say so rather than guess
        raise SourceADError(f"the generated module {compiled.path} is not loaded in this process")
    jit_module(module, compiled.spec.entry, compiled_parallel(compiled.spec), bounds_checked(compiled.spec))
    return module.__name__


def entry_source(variant: _Variant, transform: str, single: bool, core_module: str) -> tuple[str, str]:
    """The text of the entry module and its function's name."""
    spec = variant.spec
    name = spec.name
    core = f"{spec.entry}_core"
    entry = f"{name}_{transform}_njit"
    params = list(spec.params)
    types = [parse_spec(kind) for kind in spec.kinds]
    what = f"{transform}({name}, wrt={_wrt_text(spec.wrt, single)})" if spec.wrt else f"{name} (compiled primal)"
    lines = [
        f"# Generated by sourcead: the .njit entry of {what},",
        f"# which calls {spec.entry} of {core_module}. Do not edit.",
        "",
        "import numpy as np",
        "",
        "from sourcead.runtime.njit import {helpers}",
        f"from {core_module} import {jitted_name(bounds_checked(spec))} as {core}",
        "",
    ]
    seed_name = _fresh("cotangent" if transform == "vjp" else "tangents", params)
    extra = [seed_name] if transform in ("vjp", "jvp") else []
    body: list[str] = []
    emit = body.append
    # the arguments, checked and converted as the Python wrapper does
    for p, t in zip(params, types, strict=True):
        if t.is_array:
            emit(f"{p} = array_arg({p}, {p!r}, {t.ndim}, {p in spec.wrt})")
        elif t.dtype == "int":
            emit(f"{p} = int_arg({p}, {p!r})")
        elif t.dtype == "bool":
            emit(f"{p} = bool_arg({p}, {p!r})")
        else:
            emit(f"{p} = float_arg({p}, {p!r}, {p in spec.free})")
    arrays = [p for p, t in zip(params, types, strict=True) if t.is_array]
    contract = json.loads(spec.contract) if spec.contract else {}
    checks = shape_check_source(contract, params, python=False)
    if checks:
        lines[lines.index("from sourcead.runtime.njit import {helpers}")] += "\nfrom sourcead.errors import ShapeError"
        emit("# the shapes the generated code's indexing relies on (its shape contract)")
        body.extend(checks.splitlines())
    for w in spec.copied:
        emit(f"check_distinct({w}, {f'{w},{name}'!r})  # {name} writes into {w} element by element")
    for w in spec.copied:
        for other in arrays:
            if other != w:
                emit(f"check_disjoint({w}, {other}, {f'{w},{other},{name}'!r})  # {name} writes into {w}")
    for w in spec.copied:
        emit(f"{w} = {w}.copy()  # {name} writes into it: the generated code gets a copy")
    grads = [f"_grad{k}" for k in range(len(spec.wrt))]
    grads_text = grads[0] if single else f"({', '.join(grads)}{',' if len(grads) == 1 else ''})"
    call_args = list(params)
    if transform == "grad":  # the core is the gradient-only f_grad
        call_args += ["1.0", *(f"np.zeros_like({m})" for m in spec.mutated)]
        emit(f"{', '.join(grads)}, = {core}({', '.join(call_args)})")
        emit(f"return {grads_text}")
    elif transform == "value_and_grad":
        call_args += ["1.0", *(f"np.zeros_like({m})" for m in spec.mutated)]
        emit(f"_value, {', '.join(grads)} = {core}({', '.join(call_args)})")
        emit(f"return {'_value[0]' if spec.mutated else '_value'}, {grads_text}")
    elif transform == "vjp":
        _seeds(spec, seed_name, body, contract.get("outputs", ()))
        seeds = [f"_seed{k}" for k in range(spec.n_outputs + len(spec.mutated))]
        emit(f"_value, {', '.join(grads)} = {core}({', '.join(call_args + seeds)})")
        emit(f"return _value, {grads_text}")
    elif transform == "jvp":
        items = [seed_name] if single else [f"_tangent{k}" for k in range(len(spec.wrt))]
        if not single:
            emit(f"{', '.join(items)}, = tuple_arg({seed_name}, {len(spec.wrt)}, 'tangents (one per wrt argument)')")
        dots = [f"_dot{k}" for k in range(len(spec.wrt))]
        for item, dot, w in zip(items, dots, spec.wrt, strict=True):
            emit(f"{dot} = tangent_arg({item}, {w}, {w!r})")
        emit(f"return {core}({', '.join(call_args + dots)})")
    else:  # primal
        emit(f"return {core}({', '.join(call_args)})")
    lines.append("")
    lines.append(f"def {entry}({', '.join(params + extra)}):")
    lines += [f"    {line}" for line in body]
    used = sorted(h for h in _HELPERS if any(f"{h}(" in line for line in body))
    lines = [line.replace("{helpers}", ", ".join(used)) for line in lines]
    return "\n".join(lines) + "\n", entry


def _seeds(spec: Any, cotangent: str, body: list[str], outputs: Any = ()) -> None:
    """Unpack the cotangent (shaped like the outputs) into _seed0, _seed1, ... and check each,
    against the shape of its written argument or, where the contract knows it, of its result."""
    emit = body.append
    n, m = spec.n_outputs, len(spec.mutated)
    result = cotangent
    if m:
        written = [f"_seed{n + j}" for j in range(m)]
        what = f"the cotangent (of the result, {', '.join(spec.mutated)}) of a function that writes into its arguments"
        emit(f"_result, {', '.join(written)} = tuple_arg({cotangent}, {1 + m}, {what!r})")
        result = "_result"
        for j, w in enumerate(spec.mutated):
            emit(f"_seed{n + j} = seed_arg(_seed{n + j}, 'cotangent of the written argument {w}')")
            emit(f"seed_shape(_seed{n + j}, {w}.shape, 'the cotangent of the written argument `{w}`')")
    if spec.output_is_tuple:
        emit(f"{', '.join(f'_seed{k}' for k in range(n))}, = tuple_arg({result}, {n}, 'the cotangent of the result')")
        for k in range(n):
            emit(f"_seed{k} = seed_arg(_seed{k}, 'cotangent of result {k}')")
    else:
        emit(f"_seed0 = seed_arg({result}, 'cotangent')")
    for k, output in enumerate(outputs):
        if output.get("shape"):
            shape = "(" + "".join(f"{_text(d, list(spec.params))}, " for d in output["shape"]) + ")"
            emit(f"seed_shape(_seed{k}, {shape}, 'the cotangent of result {k}')")


def _fresh(name: str, taken: list[str]) -> str:
    while name in taken:
        name += "_"
    return name


def _wrt_text(wrt: tuple[str, ...], single: bool) -> str:
    return wrt[0] if single else f"({', '.join(wrt)})"
