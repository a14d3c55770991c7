"""What a prepared derivative knows of its generated module (`Spec`, the contents of a key file)
and the module once compiled (`Compiled`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Spec:
    """What calling a generated module needs to know; the pipeline's `Generated` minus the tree."""

    name: str  # the user function's name
    entry: str  # the generated function: f_jvp, f_vjp, f_grad, f_primal or f_hvp
    mode: str
    params: tuple[str, ...]
    wrt: tuple[str, ...]
    kinds: tuple[str, ...]  # the type of each parameter, spelled by `Type.spec` (`float`, `array:2`, `int_array:1`)
    free: tuple[str, ...]  # parameters whose kind comes from the call (see `Kinds.free`)
    n_outputs: int
    returns_array: bool
    mutated: tuple[str, ...]
    copied: tuple[str, ...]
    output_is_tuple: bool
    parallel: bool = False  # uses prange: compiled with parallel=True
    contract: str = ""  # the shape facts its indexing relies on, as JSON (`contract.py`, `callplan.py`)

    @classmethod
    def of(cls, gen: Any) -> Spec:
        return cls(
            name=gen.parsed.name,
            entry=gen.entry,
            mode=gen.mode,
            params=tuple(gen.params),
            wrt=tuple(gen.wrt),
            kinds=tuple(gen.param_types),
            free=tuple(gen.free),
            n_outputs=gen.n_outputs,
            returns_array=gen.returns_array,
            mutated=tuple(gen.mutated),
            copied=tuple(gen.copied),
            output_is_tuple=gen.output_is_tuple,
            parallel="prange(" in gen.source,
            contract=getattr(gen, "contract", ""),
        )

    @classmethod
    def from_json(cls, data: dict) -> Spec:
        fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
        return cls(**fields)


@dataclass(frozen=True)
class Compiled:
    """The generated derivative, as plain Python and (when asked) as a numba dispatcher."""

    spec: Spec
    source: str  # the module text
    python: Callable
    call: Callable  # what to call: the dispatcher, or `python` itself when jit=False
    path: Path
