"""numba, after loading: the options a generated module is compiled with (parallel rewrites,
bounds checks, NumPy's error model) and its dispatcher, made once per module and disk-cached in
the private folder (`numba_cache.py`).
"""

from __future__ import annotations

import json
import os
import types
import warnings
from typing import Any

import numba

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


def by_arguments(spec: Spec, module: types.ModuleType) -> Any | None:
    """Where the contract is complete but for sufficient facts (an index `w[k % 8]`: in range
    where w has 8 elements), what to call: the variant without bounds checks (parallel where the
    module has prange loops) for arguments that meet every such fact, the bounds-checked one for
    the others (numba compiles each at its first call). None where there are no such facts."""
    from .callplan import sufficient_test

    if os.environ.get("SOURCEAD_BOUNDSCHECK", "") not in ("", "0"):
        return None
    with _LOCK:  # one per module, as its dispatchers (`jit_module`)
        made = getattr(module, "_sourcead_by_arguments", None)
        if made is not None:
            return made
        test = sufficient_test(spec)
        if test is None:
            return None
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


def warn_serial(spec: Spec, warned: set[str] = set()) -> None:  # noqa: B006 - once per process
    """Say, once per variant and process, that a module with prange loops runs serially with
    numba's bounds checks because of indices the call contract cannot bound, naming them."""
    from ..errors import BoundsWarning
    from .callplan import uncovered

    if not spec.parallel or spec.contract == "" or spec.entry + spec.contract in warned:
        return
    if os.environ.get("SOURCEAD_BOUNDSCHECK", "") not in ("", "0"):
        return
    found = uncovered(spec)
    if not found:
        return
    warned.add(spec.entry + spec.contract)
    named = []
    for access in found:  # `x[i * i] (line 12)`
        index, _, line = access.partition(" (line ")
        named.append(f"`{index}`" + (f" (line {line}" if line else ""))
    first = found[0].partition(" (line ")[2].rstrip(")")
    message = (
        f"{spec.entry} of {spec.name}: the argument shapes do not bound the index {', '.join(named)}, so "
        "its prange loops run serially, with numba's bounds checks (numba's parallel loops lose an "
        "IndexError). Write the index affine in loop variables, sizes and int arguments "
        "(`w[2 * i + 1]`), or `e % c` with a constant c, and the call checks it."
    )
    filename = json.loads(spec.contract).get("file") or spec.name
    warnings.warn_explicit(BoundsWarning(message), BoundsWarning, filename, int(first) if first.isdigit() else 1)


def bounds_checked(spec: Spec) -> bool:
    """Compile with numba's bounds checks? When some index of the code escapes the shape contract
    (`contract.py`), or always with SOURCEAD_BOUNDSCHECK=1 (a debugging aid; its machine code is
    cached apart)."""
    if os.environ.get("SOURCEAD_BOUNDSCHECK", "") not in ("", "0"):
        return True
    from .callplan import needs_bounds_checks

    return needs_bounds_checks(spec)
