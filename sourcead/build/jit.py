"""numba, after loading: the options a generated module is compiled with (parallel rewrites,
bounds checks, NumPy's error model) and its dispatcher, made once per module and disk-cached in
the private folder (`numba_cache.py`).
"""

from __future__ import annotations

import inspect
import json
import os
import types
import warnings
from collections.abc import Callable
from typing import Any

import numba
from llvmlite import ir as llvm_ir
from numba.core.compiler_lock import global_compiler_lock
from numba.extending import overload
from numba.np import arrayobj, npyimpl

from . import cache_writes
from .cache_folder import cache_dir
from .keys import _module_hash
from .modules import _LOCK
from .numba_cache import _CheckedCache
from .spec import Spec

# numba's parallel rewrites, as generated modules use them: prange loops, and whole-array
# expressions as parallel loops with outputs of their own (needed inside prange bodies); not the
# rewrites of assignments into slices and the fusion of loops, which together ran
# `y[:-1] = (y[1:] - y[:-1]) * a` as one parallel loop writing y while reading it (another thread's
# y[k + 1] already new: a wrong value, found by the fuzzer), nor parallel NumPy reductions.
PARALLEL_OPTIONS = {  # numba empties the dict it is given: pass a copy
    "prange": True,
    "numpy": True,
    "setitem": False,
    "fusion": False,
    "reduction": False,
    "comprehension": False,
    "inplace_binop": False,
    "stencil": False,
}


# With these options, numba's compiles of a parallel loop's body and of the NumPy calls in
# a parallel module report "no transformation for parallel execution was possible" about our
# module although its prange loops are parallel: noise, silenced for generated modules only.
warnings.filterwarnings(
    "ignore",
    message=r"(?s).*no transformation for parallel execution was possible.*sourcead_\w+\.py",
    category=numba.NumbaPerformanceWarning,
)
# A serial compile of a parallel module (bounds-checked: `compiled_parallel`) warns that np.dot is
# faster on contiguous arrays where the generated code takes a row or a tangent lane: nothing the
# user can change, so silenced for generated modules too (the warning names the module's file).
warnings.filterwarnings(
    "ignore",
    message=r"(?s).*np\.dot\(\) is faster on contiguous arrays",
    category=numba.NumbaPerformanceWarning,
    module=r".*[\\/]sourcead_\w+$",
)


# How numba lowers a whole-array statement (`a[1:-1] + a[2:]`, NumPy's ufuncs on arrays): a loop
# nest in which each operand's index along each axis is set by a branch, "is this operand
# broadcast along this axis (length 1)?" (numba/np/npyimpl.py, `_ArrayIndexingHelper`). At -O3
# LLVM unswitches the loop on every such loop-invariant branch, cloning the loop for each
# combination: heat_3d's gradient, 60 such statements on 3-D slices, spent 190 of its 200 s of
# compile in LLVM, most of it on the clones. For generated modules the index is computed without
# a branch, `i * (length > 1)` (the same value: 0 along an axis of length 1), which LLVM has no
# reason to unswitch: the compile takes half the time and the loops run faster (the clones kept
# the per-element branches LLVM could not remove; benchmarks/README.md, "Compile time").
def _branch_free_indices(self: Any, loop_indices: Any, name: str) -> None:
    """numba's `_ArrayIndexingHelper.update_indices` (numba 0.59-0.68), without the branch."""
    builder = self.array.builder
    indices = loop_indices[len(loop_indices) - len(self.indices) :]
    for src, dst, dim in zip(indices, self.indices, self.array.shape, strict=False):
        broadcast = builder.icmp_unsigned(">", dim, llvm_ir.Constant(dim.type, 1))
        builder.store(builder.mul(src, builder.zext(broadcast, src.type)), dst)


_HELPER: Any = getattr(npyimpl, "_ArrayIndexingHelper", None)
_NUMBA_INDICES: Any = getattr(_HELPER, "update_indices", None)
if _NUMBA_INDICES is not None and list(inspect.signature(_NUMBA_INDICES).parameters) != [
    "self",
    "loop_indices",
    "name",
]:
    _NUMBA_INDICES = None  # another numba: its own lowering


# numba's error for a slice assigned from an array of another shape ("cannot assign slice of shape
# (3,) from input of shape (4,)") formats the two shapes in an f-string, compiled once per process
# and number of axes: 2.1 of spmv's 5.4 s cold first call (its adjoint `A_val_bar[a:b] += v_bar`;
# the primal assigns no slice). The generated code never shows it: a ValueError out of it is
# explained by the user's own function run again in Python (`callplan.explain`). So generated
# modules raise the message of numba's generic target, which formats nothing.
def _slice_shape_error(src_shapes: Any, index_shape: Any) -> None:
    raise ValueError("cannot assign slice from input of different size")


@overload(_slice_shape_error)
def _ol_slice_shape_error(src_shapes: Any, index_shape: Any) -> Any:
    def impl(src_shapes: Any, index_shape: Any) -> None:
        raise ValueError("cannot assign slice from input of different size")

    return impl


_NUMBA_SHAPE_ERROR: Any = getattr(arrayobj, "raise_with_shape_context", None)


def _own_lowering(jitted: Any) -> None:
    """Make `jitted` compile (with what it compiles inside) with `_branch_free_indices` and
    `_slice_shape_error`: set for the compile only, under numba's compiler lock, so no other
    compile sees them (the lock is reentrant: a compile inside ours keeps them). A numba without
    those helpers compiles as it is."""
    patches: list[tuple[Any, str, Any, Any]] = []
    if _NUMBA_INDICES is not None:
        patches.append((_HELPER, "update_indices", _NUMBA_INDICES, _branch_free_indices))
    if _NUMBA_SHAPE_ERROR is not None:
        patches.append((arrayobj, "raise_with_shape_context", _NUMBA_SHAPE_ERROR, _slice_shape_error))
    if not patches:
        return
    compile_ = jitted.compile

    def compile_ours(sig: Any) -> Any:
        with global_compiler_lock:
            if any(getattr(owner, name) is not numbas for owner, name, numbas, _ in patches):
                return compile_(sig)  # a compile of ours, inside ours
            for owner, name, _, ours in patches:
                setattr(owner, name, ours)
            try:
                return compile_(sig)
            finally:
                for owner, name, numbas, _ in patches:
                    setattr(owner, name, numbas)

    jitted.compile = compile_ours


def jit_module(module: types.ModuleType, entry: str, parallel: bool = False, boundscheck: bool = False) -> Any:
    """The numba dispatcher of a loaded module's function `entry`, made once per module (as
    `module._sourcead_jitted`, or `_sourcead_jitted_boundscheck` compiled with numba's bounds
    checks) and disk-cached in the private folder.

    Cached on disk, but not by numba's own FunctionCache (cache=True): its locators follow
    NUMBA_CACHE_DIR to folders others may write to, and it reads pickles as they are. NumPy's
    error model: 1.0 / 0.0 is inf and a singular derivative inf or nan, never an exception.
    numba's cache index keys on neither `boundscheck` nor the parallel options, so each build has
    records of its own. Parallel modules use PARALLEL_OPTIONS."""
    attribute = jitted_name(boundscheck)
    with _LOCK:
        jitted = getattr(module, attribute, None)
        if jitted is None:
            python = getattr(module, entry)
            options = {"boundscheck": True} if boundscheck else {}
            threads = dict(PARALLEL_OPTIONS) if parallel else False
            # numba takes a dict of parallel options (its stubs say bool), and `options` is keyword arguments
            jitted = numba.njit(cache=False, nogil=True, parallel=threads, error_model="numpy", **options)(  # type: ignore[call-overload]
                python
            )
            _own_lowering(jitted)
            tag = "-".join((["parallel2"] if parallel else []) + (["boundscheck"] if boundscheck else []))
            jitted._cache = cache_writes.tolerant(_CheckedCache(python, cache_dir(), _module_hash(module), tag))
            setattr(module, attribute, jitted)
    return jitted


def jitted_name(boundscheck: bool) -> str:
    """The module attribute holding the dispatcher (with or without bounds checks)."""
    return "_sourcead_jitted_boundscheck" if boundscheck else "_sourcead_jitted"


def compiled_parallel(spec: Spec) -> bool:
    """Compile the module's prange loops as parallel loops? Not where it is bounds-checked: numba
    0.68 does not bounds-check an index that is a parallel loop's own variable (`y[i]` for `i in
    prange(n)` wrote past `y`'s end silently: fuzz seed 80, program 246), and an IndexError raised
    in another thread's share of a parallel loop may be lost (the call returned the sums of the
    other chunks). A serial compile checks every index and raises. The price: a variant whose
    contract is incomplete (an index read from data, as bundle adjustment's) runs on one thread."""
    return spec.parallel and not bounds_checked(spec)


def by_arguments(
    spec: Spec, module: types.ModuleType, companion: Callable[[str, str], types.ModuleType] | None = None
) -> Any | None:
    """Where the contract is complete but for sufficient facts (an index `w[k % 8]`: in range
    where w has 8 elements), what to call: the variant without bounds checks (parallel where the
    module has prange loops) for arguments that meet every such fact, the bounds-checked one for
    the others (numba compiles each at its first call). Indices the contract probes
    (`probes.py`) are tested by their pass, compiled in a module of its own (`companion`, which
    writes and loads one: `compile.companion`). None where there is nothing to test."""
    from .callplan import sufficient_test
    from .probes import passes, probe_source, probes

    if os.environ.get("SOURCEAD_BOUNDSCHECK", "") not in ("", "0"):
        return None
    with _LOCK:  # one per module, as its dispatchers (`jit_module`)
        made = getattr(module, "_sourcead_by_arguments", None)
        if made is not None:
            return made
        shapes = sufficient_test(spec)
    complete = bool(spec.contract) and json.loads(spec.contract).get("complete", False)
    probed = None
    if complete and companion is not None and probes(spec):  # the pass over indices no shape bounds
        pass_module = companion(f"{spec.entry}_probe", probe_source(spec))
        probed = passes(jit_module(pass_module, "probe", parallel=False, boundscheck=True), len(spec.params))
    if shapes is None and probed is None:
        return None
    test = _both(shapes, probed)
    if probed is not None:
        warn_serial(spec)  # says what the probes do
    fast = jit_module(module, spec.entry, spec.parallel, False)
    checked = jit_module(module, spec.entry, False, True)

    def call(*args: Any) -> Any:
        return fast(*args) if test(*args) else checked(*args)

    call.fast, call.checked = fast, checked  # type: ignore[attr-defined]
    with _LOCK:
        made = getattr(module, "_sourcead_by_arguments", None)
        if made is None:
            module._sourcead_by_arguments = made = call  # type: ignore[attr-defined]
    return made


def _both(first: Callable[..., bool] | None, second: Callable[..., bool] | None) -> Callable[..., bool]:
    """The test that passes where both do (the cheap shape facts first; None passes)."""
    if first is None or second is None:
        return first or second  # type: ignore[return-value]

    def both(*args: Any) -> bool:
        return first(*args) and second(*args)

    return both


def warn_serial(spec: Spec, warned: set[str] = set()) -> None:  # noqa: B006 - once per process
    """Say, once per variant and process, what a module with prange loops does about indices the
    argument shapes do not bound, naming each with its line: where some index escapes the call
    contract, its prange loops run serially with numba's bounds checks; where each such index is
    probed (`probes.py`), each call tests their values first and stays parallel where they pass."""
    from ..errors import BoundsWarning
    from .callplan import uncovered
    from .probes import probes

    if not spec.parallel or spec.contract == "" or spec.entry + spec.contract in warned:
        return
    if os.environ.get("SOURCEAD_BOUNDSCHECK", "") not in ("", "0"):
        return
    found = uncovered(spec)
    probed = [
        f"{fact['access']} (line {fact['where'][0]})" if fact.get("where") else fact["access"] for fact in probes(spec)
    ]
    if not found and not probed:
        return
    warned.add(spec.entry + spec.contract)
    if found:
        message = (
            f"{spec.entry} of {spec.name}: the argument shapes do not bound the index {_named(found)}, so "
            "its prange loops run serially, with numba's bounds checks (numba's parallel loops lose an "
            "IndexError). Write the index affine in loop variables, sizes and int arguments "
            "(`w[2 * i + 1]`), or `e % c` with a constant c, and the call checks it."
        )
    else:
        message = (
            f"{spec.entry} of {spec.name}: the argument shapes do not bound the index {_named(probed)}, so "
            "each call first computes its values over its loops in one serial pass; where all are in range "
            "the prange loops run in parallel without bounds checks, where one is not they run serially "
            "with numba's bounds checks, failing where the code indexes out of range."
        )
    first = (found or probed)[0].partition(" (line ")[2].rstrip(")")
    filename = json.loads(spec.contract).get("file") or spec.name
    warnings.warn_explicit(BoundsWarning(message), BoundsWarning, filename, int(first) if first.isdigit() else 1)


def _named(accesses: list[str]) -> str:
    """`x[i * i]` (line 12), ... from `x[i * i] (line 12)`."""
    named = []
    for access in accesses:
        index, _, line = access.partition(" (line ")
        named.append(f"`{index}`" + (f" (line {line}" if line else ""))
    return ", ".join(named)


def bounds_checked(spec: Spec) -> bool:
    """Compile with numba's bounds checks? When some index of the code escapes the shape contract
    (`contract.py`), or always with SOURCEAD_BOUNDSCHECK=1 (a debugging aid; its machine code is
    cached apart)."""
    if os.environ.get("SOURCEAD_BOUNDSCHECK", "") not in ("", "0"):
        return True
    from .callplan import needs_bounds_checks

    return needs_bounds_checks(spec)
