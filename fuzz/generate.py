"""Random programs in sourcead's documented subset, each reproducible from (seed, index) alone.

A program is a small module: `import math / numpy / numba`, zero to two helper functions and a
main function `f` whose parameters are floats, ints and float64 arrays (1-D, 2-D; 3-D and int64
index arrays behind feature flags). The generator knows the concrete size of every array and the
range of every integer (sizes and ints are fixed for a program; only the float values are redrawn
for a new point), so every index it writes is in bounds, every loop terminates, and every
`while` loop has a counter bound. Values stay finite through safe forms (`x / (1.0 + y * y)`,
`math.log(1.0 + x * x)`, powers of positive bases); the program is run as plain Python before it
is handed out and regenerated (up to `ATTEMPTS` times) when it raises or is not finite.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .features_arrays import ARRAY_FEATURES, SALT, ArrayExtras
from .written import writes_agree, written_params

# name -> (on by default, what it generates); the issue-38 array constructs are in features_arrays.py
FEATURES: dict[str, tuple[bool, str]] = {
    "math": (True, "math functions on floats (sin, exp, log(1+x*x), hypot, atan2, erf, pow, ...)"),
    "npmath": (True, "the NumPy twins of the math functions on floats (np.sin, np.arctan2, ...)"),
    "absminmax": (True, "abs, min and max with 2 and 3 arguments"),
    "floatcall": (True, "float(...) of floats and ints"),
    "compare": (True, "comparisons, and/or/not in conditions"),
    "ifexp": (True, "conditional expressions"),
    "augassign": (True, "+= -= *= /= **=, also accumulations of constants and ints"),
    "for": (True, "for loops over range with 1-3 arguments, positive and negative steps"),
    "nested": (True, "nested loops"),
    "triangular": (True, "triangular loop bounds range(i + 1, n), range(i)"),
    "zerotrip": (True, "loops that run zero times"),
    "while": (True, "while loops with a counter bound (and data-dependent conditions)"),
    "break": (True, "break inside loops"),
    "continue": (True, "continue inside loops"),
    "early_return": (True, "return inside loops and branches"),
    "if": (True, "if/elif/else"),
    "arrays": (True, "float64 array parameters (1-D), element reads and writes"),
    "array2d": (True, "2-D arrays a[i, j]"),
    "array3d": (False, "3-D arrays a[i, j, k] (not supported yet)"),
    "negindex": (True, "negative indices a[-1], a[-1 - i]"),
    "write_args": (True, "writes into argument arrays (their final state is an extra output)"),
    "local_arrays": (True, "np.zeros, np.empty, np.ones, np.zeros_like, x.copy()"),
    "alloc_in_loops": (False, "local arrays created inside loops (not supported yet)"),
    "swap": (True, "swaps u, v = v, u of floats and local arrays"),
    "tuple_assign": (True, "tuple assignment a, b = b, a * 2.0"),
    "int_params": (True, "int parameters as loop bounds, steps and indices"),
    "recompute": (True, "loop bodies that start with an index and a re-read of arrays (recompute.py), crossed writes"),
    "stencil": (True, "loops writing y[i] from x[i + c] at constant offsets c, whose adjoints gather.py gathers"),
    "scratch": (
        True,
        "a local 1-D array filled whole inside a loop (w[0] = ..., then a loop over the rest):"
        " a checkpoint's scratch (coverage.py)",
    ),
    "select": (
        True,
        "a running minimum or maximum, if c < best: best = c, sometimes with a second value:"
        " a reversal that stops early (ReversePlan.early_exit)",
    ),
    "after_loop": (True, "a loop variable read after its loop, as an index (loopvars.py)"),
    "int_locals": (True, "int locals: i + 1, n // 2, counters, (i + 1) % n, min(i + 1, n - 1)"),
    "int_from_float": (True, "ints computed from floats: int(...), round(...), math.floor(...)"),
    "index_arrays": (False, "int64 index arrays as arguments, y[idx[k]] += ... (not supported yet)"),
    "helpers": (True, "module-level helper functions called from the main function"),
    "whole": (True, "whole-array operations: broadcasting, np.sum/mean/max/dot, @, slices"),
    "whole_in_loops": (False, "array-valued arithmetic inside loops (not supported yet)"),
    "slice_write": (True, "writes into slices y[1:] = ..."),
    "prange": (True, "numba.prange parallel maps and reductions (low weight)"),
    "tuples": (True, "tuples built from values: p = (a * a, b); p[0] * p[1]"),
    "gen_names": (True, "names that look like generated names: x_bar, x_dot, t0, tape, top, value"),
    "inf": (True, "math.inf / np.inf in comparisons and as min/max initial values"),
    "pi": (True, "math.pi / np.pi"),
    "tuple_result": (True, "functions that return a tuple of floats"),
    "array_result": (True, "functions that return an array"),
    **ARRAY_FEATURES,
}
DEFAULT_FEATURES = frozenset(name for name, (on, _) in FEATURES.items() if on)
ATTEMPTS = 25  # generation attempts per (seed, index) before the index counts as discarded
MAX_ITERS = 400  # bound on the product of the trip counts of nested loops


def resolve_features(spec: str | None) -> frozenset[str]:
    """`--features` text -> the enabled set. Comma-separated items: `name` or `+name` enables,
    `-name` disables, `all` / `none` / `default` reset; applied left to right from the default."""
    enabled = set(DEFAULT_FEATURES)
    for item in (spec or "").replace(" ", "").split(","):
        if not item:
            continue
        if item in ("all", "none", "default"):
            enabled = set(FEATURES) if item == "all" else set() if item == "none" else set(DEFAULT_FEATURES)
            continue
        name = item.lstrip("+-")
        if name not in FEATURES:
            raise ValueError(f"unknown feature {name!r}; known: {', '.join(FEATURES)}")
        if item.startswith("-"):
            enabled.discard(name)
        else:
            enabled.add(name)
    return frozenset(enabled)


# --- programs ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ArgSpec:
    """One parameter of the main function: float / int / array (float64) / intarray (int64).
    Ints and int arrays are part of the program (sizes and bounds depend on them); floats and
    float arrays are redrawn for each point."""

    name: str
    kind: str
    shape: tuple[int, ...] = ()
    value: Any = None  # int, or a tuple of ints for an int array


@dataclass(frozen=True)
class Program:
    seed: int
    index: int
    attempt: int
    source: str  # the whole module
    name: str  # the main function
    argspecs: tuple[ArgSpec, ...]
    wrt: tuple[str, ...]  # names of the parameters differentiated
    wrt_api: Any  # what is passed to sourcead as wrt: a name, a position, or a tuple of them
    written: tuple[str, ...]  # array parameters the function writes, in parameter order
    result: str  # "float", "tuple" or "array"
    jit: bool = False
    used: tuple[str, ...] = ()  # features this program uses
    fixed_args: tuple | None = None  # explicit arguments (a reproducer); else drawn per point

    @property
    def params(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.argspecs)

    def args(self, point: int = 0) -> tuple:
        """The example arguments at `point` (0: the program's own), fresh arrays every call."""
        if self.fixed_args is not None and point == 0:
            return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in self.fixed_args)
        rng = np.random.default_rng([self.seed, self.index, self.attempt, point, 7])
        out: list[Any] = []
        for spec in self.argspecs:
            if spec.kind == "float":
                out.append(float(rng.uniform(-1.5, 1.5)))
            elif spec.kind == "array":
                out.append(rng.uniform(-1.5, 1.5, size=spec.shape))
            elif spec.kind == "int":
                out.append(int(spec.value))
            else:
                out.append(np.array(spec.value, dtype=np.int64).reshape(spec.shape))
        return tuple(out)

    @property
    def lines(self) -> int:
        return self.source.count("\n")


def program_seed(seed: int, index: int, salt: int = 0) -> int:
    """A 64-bit seed for (seed, index): independent of how programs are spread over workers."""
    return int(np.random.SeedSequence([seed, index, salt]).generate_state(2, dtype=np.uint32).view(np.uint64)[0])


def wants_jit(seed: int, index: int, share: float) -> bool:
    """Is program (seed, index) also checked compiled? A draw of its own, so the programs do not
    depend on the share."""
    return random.Random(program_seed(seed, index, 1)).random() < share


def generate(seed: int, index: int, features: frozenset[str] = DEFAULT_FEATURES, jit: bool = False) -> Program | None:
    """Program (seed, index): the first of up to ATTEMPTS candidates that runs as plain Python
    with a finite value at its example arguments; None when none does (counted as discarded)."""
    for attempt in range(ATTEMPTS):
        rnd = random.Random(program_seed(seed, index, 100 + attempt))
        extras = ArrayExtras(random.Random(program_seed(seed, index, SALT + attempt)), features)
        program = _Generator(rnd, features, extras).program(seed, index, attempt, jit)
        if program is not None and runs_finite(program) and _writes_found(program):
            return program
    return None


def _writes_found(program: Program) -> bool:
    """Every array a plain run changes is among `program.written` (what the checker expects back)."""
    func = load_source(program.source, program.name)
    return writes_agree(func, program.params, program.written, program.args(0))


def load_source(source: str, name: str, filename: str = "<fuzz>") -> Callable:
    """The function `name` of a module source, executed in a fresh namespace (for plain runs)."""
    namespace: dict[str, Any] = {"__name__": "fuzz_program"}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


def outputs(func: Callable, program: Program, args: tuple) -> list[Any]:
    """The function's outputs as plain Python: result leaves, then the final state of each written
    argument (the function runs on copies: `args` is never touched)."""
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    result = func(*copies)
    leaves = list(result) if program.result == "tuple" else [result]
    if program.result == "tuple" and len(leaves) != 2:
        raise ValueError("tuple result of the wrong length")
    positions = {name: k for k, name in enumerate(program.params)}
    return leaves + [copies[positions[w]] for w in program.written]


def finite(leaves: list[Any]) -> bool:
    for leaf in leaves:
        if isinstance(leaf, np.ndarray):
            if leaf.dtype != np.float64 or not np.all(np.isfinite(leaf)):
                return False
        elif isinstance(leaf, bool) or not isinstance(leaf, (float, int)) or not math.isfinite(leaf):
            return False
    return True


class _TooSlow(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _TooSlow


def runs_finite(program: Program, point: int = 0, seconds: float = 5.0) -> bool:
    """Does the program run as plain Python, with finite outputs of a sane size, at `point`,
    within `seconds` (a shrunk program can lose its loop counter)?"""
    import signal
    import threading

    timed = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    if timed:
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        with np.errstate(all="ignore"):
            func = load_source(program.source, program.name)
            leaves = outputs(func, program, program.args(point))
    except Exception:
        return False
    finally:
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    if not finite(leaves):
        return False
    if program.result == "float" and isinstance(leaves[0], np.ndarray):
        return False
    if program.result == "array" and not isinstance(leaves[0], np.ndarray):
        return False
    return all(abs(float(np.max(np.abs(leaf)))) < 1e12 for leaf in leaves if np.size(leaf))


# --- the generator ------------------------------------------------------------------------------

_PLAIN_FLOATS = ["a", "b", "c", "r", "u", "v", "w", "alpha", "beta", "h"]
_PLAIN_LOCALS = ["s", "t", "p", "q", "z", "acc", "e", "g", "d", "lo", "hi", "best", "tmp", "prod", "sm"]
_PLAIN_ARRAYS = ["x", "y", "xs", "a1", "v1", "data", "coef", "buf"]
_PLAIN_MATS = ["A", "B", "M", "W", "K"]
_PLAIN_INTS = ["k", "j0", "idx0", "pos", "c", "cnt", "mid", "i2", "jj", "kk"]
_GEN_NAMES = ["x_bar", "x_dot", "t0", "t1", "t2", "tape", "top", "value", "itape", "out_bar", "s_bar", "a_dot",
              "value_dot", "y_bar", "r_bar", "helper_x", "f_bar"]  # fmt: skip
_GEN_INTS = ["top", "t0", "itape", "i_bar", "k_dot"]

_UNARY = {  # name -> argument template keeping it in its domain ({} is the operand, {m} the module)
    "sin": "{}", "cos": "{}", "atan": "{}", "tanh": "{}", "asinh": "{}", "erf": "{}", "erfc": "{}",
    "exp": "{m}.sin({})", "expm1": "{m}.cos({})", "sinh": "{m}.tanh({})", "cosh": "{m}.sin({})",
    "tan": "0.5 * {m}.tanh({})", "log": "1.0 + {} * {}", "log2": "1.0 + {} * {}", "log10": "2.0 + {} * {}",
    "sqrt": "1.0 + {} * {}", "log1p": "{} * {}", "asin": "0.9 * {m}.tanh({})", "acos": "0.8 * {m}.sin({})",
    "acosh": "1.5 + {} * {}", "atanh": "0.9 * {m}.tanh({})", "fabs": "{}",
}  # fmt: skip
_NP_NAMES = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh", "acosh": "arccosh",
             "atanh": "arctanh", "atan2": "arctan2"}  # fmt: skip
_NO_NP = {"erf", "erfc"}  # math only
_ELEMENTWISE = ["np.sin({})", "np.cos({})", "np.tanh({})", "np.exp(-{} * {})", "np.sqrt(1.0 + {} * {})",
                "np.log(1.0 + {} * {})", "np.arctan({})", "np.abs({})", "({} * {})"]  # fmt: skip


# --- which features a program uses (read from its text) ----------------------------------------

_STRUCTURAL = frozenset(
    {
        "nested",
        "triangular",
        "zerotrip",
        "alloc_in_loops",
        "whole_in_loops",
        "int_locals",
        "tuples",
        "gen_names",
        "recompute",
        "after_loop",
        "scratch",
        "select",
    }
)
_FEATURE_PATTERNS = {
    "math": r"math\.(?!pi\b|inf\b)\w+\(",
    "npmath": r"np\.(sin|cos|tan|arc\w+|sinh|cosh|tanh|exp|expm1|log\w*|sqrt|hypot|copysign|power|maximum|minimum"
    r"|square|abs|fabs)\(",
    "absminmax": r"\b(abs|min|max)\(",
    "floatcall": r"\bfloat\(",
    "ifexp": r"\S.* if .* else ",
    "augassign": r"(\+=|-=|\*=|/=|\*\*=)",
    "for": r"\bfor \w+ in range\(",
    "while": r"^\s*while ",
    "break": r"^\s*break$",
    "continue": r"^\s*continue$",
    "early_return": r"^\s{8,}return ",
    "if": r"^\s*if ",
    "compare": r"(<|>|==|!=)",
    "negindex": r"\[(-|[^\]]*, -)",
    "slice_write": r"^\s*\w+\[[^\]]*:[^\]]*\] =",
    "prange": r"numba\.prange\(",
    "whole": r"np\.(sum|mean|max|min|prod|dot|outer|cumsum|where|clip|linalg)\b|\.sum\(| @ |\[1:\]|\[:-1\]|\.T\b",
    "local_arrays": r"np\.(zeros|empty|ones|zeros_like)\(|\.copy\(\)",
    "int_from_float": r"\b(int|round)\(|math\.floor\(",
    "inf": r"\b(math|np)\.inf\b",
    "pi": r"\b(math|np)\.pi\b",
}


def detect_features(source: str, argspecs: Any, written: tuple[str, ...], result: str) -> set[str]:
    """The features a program's text shows (approximate for a few: `compare`, `npmath`)."""
    import re

    found = {name for name, pattern in _FEATURE_PATTERNS.items() if re.search(pattern, source, re.M)}
    if re.search(r"^\s*(\w+), (\w+) = \2, \1$", source, re.M):
        found.add("swap")
    elif re.search(r"^\s*\w+, \w+ = ", source, re.M):
        found.add("tuple_assign")
    if source.count("\ndef ") > 1:
        found.add("helpers")
    if written:
        found.add("write_args")
    shapes = [a.shape for a in argspecs if a.kind == "array"]
    if any(len(s) == 1 for s in shapes):
        found.add("arrays")
    if any(len(s) == 2 for s in shapes):
        found.add("array2d")
    if any(len(s) == 3 for s in shapes):
        found.add("array3d")
    if any(a.kind == "int" for a in argspecs):
        found.add("int_params")
    if any(a.kind == "intarray" for a in argspecs):
        found.add("index_arrays")
    if result != "float":
        found.add(f"{result}_result")
    return found


@dataclass
class _Arr:
    shape: tuple[int, ...]
    writable: bool
    param: str | None = None  # the main function's parameter this name is (writes make it an output)
    local: bool = False  # created in the function (may be swapped)
    ints: tuple[int, int] | None = None  # an int64 index array: the range of its values


@dataclass
class _Scope:
    floats: list[str] = field(default_factory=list)
    ints: dict[str, tuple[int, int | None]] = field(default_factory=dict)  # name -> (lo, hi); hi None: unknown
    arrays: dict[str, _Arr] = field(default_factory=dict)
    tuples: dict[str, int] = field(default_factory=dict)
    loop: str | None = None  # innermost loop: "for", "while", "prange"
    in_loop: bool = False
    in_prange: bool = False
    iters: int = 1
    loop_depth: int = 0
    loop_vars: frozenset[str] = frozenset()

    def child(self, **changes: Any) -> _Scope:
        base = _Scope(list(self.floats), dict(self.ints), dict(self.arrays), dict(self.tuples), self.loop,
                      self.in_loop, self.in_prange, self.iters, self.loop_depth, self.loop_vars)  # fmt: skip
        return replace(base, **changes)


@dataclass
class _Helper:
    name: str
    params: list[tuple[str, Any]]  # (kind, shape) per parameter: ("f", ()), ("a", shape), ("w", shape)
    returns: str | None  # "f", "t" or None (called for what it writes)


class _Fn:
    """One function being written: its lines and the kind of every name in it."""

    def __init__(self, name: str):
        self.name = name
        self.lines: list[str] = []
        self.indent = 1
        self.kinds: dict[str, str] = {}
        self.written: set[str] = set()  # parameters written (main: array params; helper: its params)
        self.result: str | None = None

    def emit(self, text: str) -> None:
        self.lines.append("    " * self.indent + text)


class _Generator:
    def __init__(self, rnd: random.Random, features: frozenset[str], extras: ArrayExtras | None = None):
        self.rnd = rnd
        self.extras = extras or ArrayExtras(random.Random(0), frozenset())  # its own stream (features_arrays.py)
        self.features = features
        self.used: set[str] = set()
        self.helpers: list[_Helper] = []
        self.fn: _Fn = _Fn("f")
        self.budget = 0
        self.in_helper = False

    # --- small utilities ---

    def on(self, feature: str, p: float = 1.0) -> bool:
        return feature in self.features and self.rnd.random() < p

    def use(self, feature: str) -> None:
        self.used.add(feature)

    def pick(self, options: list[tuple[Any, float]]) -> Any:
        options = [(o, w) for o, w in options if w > 0]
        total = sum(w for _, w in options)
        r = self.rnd.random() * total
        for option, weight in options:
            r -= weight
            if r <= 0:
                return option
        return options[-1][0]

    def fresh(self, kind: str, pool: list[str]) -> str:
        """A name not used in this function yet (kinds never change within a function)."""
        taken = self.fn.kinds
        if self.on("gen_names", 0.03):
            gen_pool = [n for n in (_GEN_INTS if kind == "i" else _GEN_NAMES) if n not in taken]
            if gen_pool:
                self.use("gen_names")
                name = self.rnd.choice(gen_pool)
                taken[name] = kind
                return name
        options = [n for n in pool if n not in taken]
        name = self.rnd.choice(options) if options else f"{pool[0]}{len(taken)}"
        while name in taken:
            name += "_"
        taken[name] = kind
        return name

    def const(self) -> str:
        return self.rnd.choice(["0.5", "1.5", "2.0", "0.25", "3.0", "-1.0", "0.75", "1.0", "0.1"])

    # --- the program ---

    def program(self, seed: int, index: int, attempt: int, jit: bool) -> Program | None:
        rnd = self.rnd
        n, m = rnd.randint(2, 6), rnd.randint(2, 5)
        self.n, self.m = n, m
        argspecs: list[ArgSpec] = []
        taken: set[str] = set()

        def pname(pool: list[str]) -> str:
            if self.on("gen_names", 0.05):
                options = [x for x in _GEN_NAMES if x not in taken]
                if options:
                    self.use("gen_names")
                    name = rnd.choice(options)
                    taken.add(name)
                    return name
            options = [x for x in pool if x not in taken]
            name = rnd.choice(options)
            taken.add(name)
            return name

        for _ in range(rnd.choice([0, 1, 1, 2, 2, 3])):
            argspecs.append(ArgSpec(pname(_PLAIN_FLOATS), "float"))
        if "arrays" in self.features:
            for _ in range(rnd.choice([0, 1, 1, 2, 2, 3])):
                argspecs.append(ArgSpec(pname(_PLAIN_ARRAYS), "array", (rnd.choice([n, n, m]),)))
            if self.on("array2d", 0.5):
                for _ in range(rnd.choice([1, 1, 2])):
                    argspecs.append(ArgSpec(pname(_PLAIN_MATS), "array", rnd.choice([(n, m), (n, m), (m, n)])))
                self.use("array2d")
            if self.on("array3d", 0.3):
                argspecs.append(ArgSpec(pname(["T", "U3"]), "array", (2, rnd.randint(2, 3), 2)))
                self.use("array3d")
        if not any(a.kind in ("float", "array") for a in argspecs):
            argspecs.append(ArgSpec(pname(_PLAIN_FLOATS), "float"))
        if self.on("int_params", 0.5):
            for _ in range(rnd.choice([1, 1, 2])):
                role = rnd.choice(["index", "steps", "stride"])
                value = {"index": rnd.randint(0, n - 1), "steps": rnd.randint(0, 3), "stride": rnd.randint(1, 3)}[role]
                argspecs.append(ArgSpec(pname(_PLAIN_INTS), "int", (), value))
            self.use("int_params")
        if "arrays" in self.features and self.on("index_arrays", 0.4):
            size = rnd.randint(2, 5)
            argspecs.append(ArgSpec(pname(["idx", "perm", "ind"]), "intarray", (size,),
                                    tuple(rnd.randint(0, n - 1) for _ in range(size))))  # fmt: skip
            self.use("index_arrays")
        rnd.shuffle(argspecs)

        if self.on("helpers", 0.35):
            self.use("helpers")
            for _ in range(rnd.choice([1, 1, 2])):
                self.make_helper(argspecs)

        result = "float"
        if self.on("tuple_result", 0.1):
            result = "tuple"
        elif self.on("array_result", 0.1) and "arrays" in self.features:
            result = "array"
        main = self.make_main(argspecs, result)
        if main is None:
            return None
        differentiable = [a.name for a in argspecs if a.kind in ("float", "array")]
        wrt = rnd.sample(differentiable, rnd.randint(1, min(3, len(differentiable))))
        wrt = [a for a in differentiable if a in wrt] if rnd.random() < 0.5 else wrt
        params = [a.name for a in argspecs]
        if len(wrt) == 1 and rnd.random() < 0.5:
            wrt_api: Any = wrt[0] if rnd.random() < 0.7 else params.index(wrt[0])
        else:
            wrt_api = tuple(w if rnd.random() < 0.8 else params.index(w) for w in wrt)
        header = "import math\n\nimport numba\nimport numpy as np\n\n\n"
        helpers = (self.helper_sources if self.helpers else []) + self.extras.helpers
        helper_text = "\n\n\n".join(helpers)
        source = header + (helper_text + "\n\n\n" if helper_text else "") + main + "\n"
        arrays = [a.name for a in argspecs if a.kind == "array"]
        written = written_params(source, "f", tuple(params), arrays)  # from the text: what was really emitted
        structural = (self.used & _STRUCTURAL) | self.extras.used
        used = structural | detect_features(source, argspecs, written, result)
        return Program(seed, index, attempt, source, "f", tuple(argspecs), tuple(wrt), wrt_api, written, result, jit,
                       tuple(sorted(used)))  # fmt: skip

    @property
    def helper_sources(self) -> list[str]:
        return self._helper_sources

    # --- helpers ---

    def make_helper(self, argspecs: list[ArgSpec]) -> None:
        if not hasattr(self, "_helper_sources"):
            self._helper_sources: list[str] = []
        rnd = self.rnd
        shapes = [a.shape for a in argspecs if a.kind == "array" and len(a.shape) <= 2]
        kinds = ["ff", "ff", "pair"]
        if shapes:
            kinds += ["af", "af", "fill"]
        kind = rnd.choice(kinds)
        name = self.rnd.choice(["h", "helper", "g1", "step", "pair", "mix", "energy", "fill"])
        name = f"{name}{len(self.helpers)}" if rnd.random() < 0.8 else name
        if any(h.name == name for h in self.helpers) or name == "f":
            name = f"{name}_{len(self.helpers)}"
        outer_fn, self.fn = self.fn, _Fn(name)
        self.in_helper = True
        scope = _Scope()
        params: list[tuple[str, Any]] = []
        names: list[str] = []
        n_float = rnd.randint(1, 2) if kind in ("ff", "pair") else rnd.randint(0, 1)
        if kind in ("af", "fill"):
            shape = rnd.choice(shapes)
            if kind == "fill":
                out = self.fresh("a", ["out", "dst", "y", "res"])
                scope.arrays[out] = _Arr(shape, True, param=out)
                params.append(("w", shape))
                names.append(out)
            src = self.fresh("a", ["x", "src", "v", "arr"])
            scope.arrays[src] = _Arr(shape, False)
            params.append(("a", shape))
            names.append(src)
        for _ in range(n_float):
            p = self.fresh("f", ["a", "b", "c", "x0", "s0"])
            scope.floats.append(p)
            params.append(("f", ()))
            names.append(p)
        order = list(range(len(params)))
        rnd.shuffle(order)
        params = [params[k] for k in order]
        names = [names[k] for k in order]
        returns: str | None = {"ff": "f", "af": "f", "pair": "t", "fill": rnd.choice(["f", None])}[kind]
        self.fn.result = {"f": "float", "t": "tuple", None: None}[returns]
        self.budget = rnd.randint(1, 4)
        if kind in ("af", "fill"):
            acc = self.fresh("f", _PLAIN_LOCALS)
            self.fn.emit(f"{acc} = 0.0")
            scope.floats.append(acc)
            arr = next(n for n in names if scope.arrays.get(n) and not scope.arrays[n].writable)
            shape = scope.arrays[arr].shape
            i = self.fresh("i", ["i", "k"])
            self.fn.emit(f"for {i} in range({arr}.shape[0]):")
            self.fn.indent += 1
            inner = scope.child(loop="for", in_loop=True, iters=shape[0], loop_depth=1, loop_vars=frozenset({i}))
            inner.ints[i] = (0, shape[0] - 1)
            if kind == "fill":
                out = next(n for n in names if scope.arrays.get(n) and scope.arrays[n].writable)
                self.write_elem(inner, out)
            self.fn.emit(f"{acc} += {self.fexpr(inner, 2)}")
            self.fn.indent -= 1
        self.block(scope, 2, rnd.randint(0, 2))
        if returns == "f":
            self.fn.emit(f"return {self.fexpr(scope, 3)}")
        elif returns == "t":
            self.fn.emit(f"return {self.fexpr(scope, 2)}, {self.fexpr(scope, 2)}")
        text = f"def {name}({', '.join(names)}):\n" + "\n".join(self.fn.lines)
        written = [k for k, nm in enumerate(names) if nm in self.fn.written]
        params = [("w", s) if k in written else (kd, s) for k, (kd, s) in enumerate(params)]
        self._helper_sources.append(text)
        self.helpers.append(_Helper(name, params, returns))
        self.fn = outer_fn
        self.in_helper = False

    def call_helper(self, sc: _Scope, want: str | None) -> str | None:
        """A call to a helper returning `want` ("f", "t", or "any" for a statement), or None."""
        options = [h for h in self.helpers if (want == "any" or h.returns == want)]
        self.rnd.shuffle(options)
        for helper in options:
            args = []
            for kind, shape in helper.params:
                if kind == "f":
                    if self.on("ifexp", 0.2) and "compare" in self.features:
                        self.use("ifexp")
                        args.append(f"{self.fexpr(sc, 1)} if {self.cond(sc)} else {self.fexpr(sc, 1)}")
                    else:
                        args.append(self.fexpr(sc, 1))
                    continue
                arrays = [nm for nm, a in sc.arrays.items() if a.shape == shape and a.ints is None]
                if kind == "w":
                    arrays = [nm for nm in arrays if sc.arrays[nm].writable]
                if not arrays:
                    break
                chosen = self.rnd.choice(arrays)
                if kind == "w":
                    self.mark_written(sc, chosen)
                args.append(chosen)
            else:
                self.use("helpers")
                return f"{helper.name}({', '.join(args)})"
        return None

    # --- the main function ---

    def make_main(self, argspecs: list[ArgSpec], result: str) -> str | None:
        rnd = self.rnd
        self.fn = fn = _Fn("f")
        fn.result = result
        sc = _Scope()
        for a in argspecs:
            fn.kinds[a.name] = {"float": "f", "int": "i", "array": "a", "intarray": "a"}[a.kind]
            if a.kind == "float":
                sc.floats.append(a.name)
            elif a.kind == "int":
                sc.ints[a.name] = (a.value, a.value)
            elif a.kind == "array":
                sc.arrays[a.name] = _Arr(a.shape, "write_args" in self.features, param=a.name)
            else:
                sc.arrays[a.name] = _Arr(a.shape, False, param=a.name, ints=(min(a.value), max(a.value)))
        self.budget = rnd.randint(2, 10)
        # prologue: sizes, accumulators, local arrays
        arrays1 = [(nm, a) for nm, a in sc.arrays.items() if a.ints is None]
        if arrays1 and rnd.random() < 0.5:
            nm, a = rnd.choice(arrays1)
            size = self.fresh("i", ["n", "m", "size", "nn"])
            fn.emit(f"{size} = {rnd.choice([f'{nm}.shape[0]', f'len({nm})'])}")
            sc.ints[size] = (a.shape[0], a.shape[0])
        for _ in range(rnd.choice([1, 1, 2])):
            acc = self.fresh("f", _PLAIN_LOCALS)
            fn.emit(f"{acc} = {rnd.choice(['0.0', '0.0', '1.0', '0.5'])}")
            sc.floats.append(acc)
        result_array = None
        if result == "array" or self.on("local_arrays", 0.5):
            for k in range(rnd.choice([1, 1, 2])):
                made = self.alloc_array(sc, one_d=(k == 0 and result == "array"))
                if made and result_array is None:
                    result_array = made
        if result == "array" and result_array is None:
            return None
        self.result_array = result_array
        self.block(sc, 3, self.budget)
        self.extras.flush(self, sc)
        # epilogue: fold what was computed into the result
        for nm, a in list(sc.arrays.items()):
            if a.local and nm != result_array and len(a.shape) == 1 and rnd.random() < 0.6 and sc.floats:
                target = rnd.choice(sc.floats)
                if self.on("whole", 0.3):
                    fn.emit(f"{target} += {rnd.choice(['np.sum', 'np.mean', 'np.max'])}({nm})")
                else:
                    i = self.fresh_loop_var(sc)
                    fn.emit(f"for {i} in range({self.size_expr(sc, a.shape[0])}):")
                    fn.emit(f"    {target} += {self.rnd.choice(['', '0.5 * '])}{nm}[{i}]")
        fn.emit(f"return {self.extras.fold(self.return_expr(sc))}")
        params = ", ".join(a.name for a in argspecs)
        return f"def f({params}):\n" + "\n".join(fn.lines)

    def return_expr(self, sc: _Scope) -> str:
        result = self.fn.result
        if result == "float":
            leaves = [self.fexpr(sc, 2)]
            for name in sc.floats[-3:]:
                if self.rnd.random() < 0.6:
                    leaves.append(name if self.rnd.random() < 0.7 else f"{self.const()} * {name}")
            return " + ".join(leaves)
        if result == "tuple":
            return f"{self.fexpr(sc, 2)}, {self.fexpr(sc, 2)}"
        if self.in_helper:
            raise AssertionError("helpers return floats or tuples")
        if self.on("whole", 0.3) and not sc.in_loop and self.result_array in sc.arrays:
            shape = sc.arrays[self.result_array].shape
            return self.aexpr(sc, shape, 1) or self.result_array
        return self.result_array or "x"

    def fresh_loop_var(self, sc: _Scope) -> str:
        taken = sc.loop_vars
        for name in ["i", "j", "l", "ii", "jj", "kk", "t_", "q_"]:
            if name not in taken and self.fn.kinds.get(name, "i") == "i" and name not in sc.ints:
                self.fn.kinds[name] = "i"
                return name
        return self.fresh("i", ["iv"])

    def alloc_array(self, sc: _Scope, one_d: bool = False) -> str | None:
        rnd = self.rnd
        fn = self.fn
        sources = [(nm, a) for nm, a in sc.arrays.items() if a.ints is None]
        two_d = [(nm, a) for nm, a in sources if len(a.shape) == 2]
        if two_d and not one_d and rnd.random() < 0.3:
            src, a = rnd.choice(two_d)
            shape = a.shape
        elif sources and rnd.random() < 0.8:
            src, a = rnd.choice([(nm, a) for nm, a in sources if len(a.shape) == 1] or sources)
            shape = a.shape if len(a.shape) == 1 else (a.shape[0],)
        else:
            src, shape = None, (rnd.choice([self.n, self.m]),)
        name = self.fresh("a", ["y", "z", "w", "out", "acc_a", "tmp_a", "u_a", "buf2"])
        size = self.size_expr(sc, shape[0])
        dims = size if len(shape) == 1 else f"({size}, {self.size_expr(sc, shape[1])})"
        options = [(f"np.zeros({dims})", 3), (f"np.ones({dims})", 1), ("empty", 1)]
        if src is not None and sc.arrays[src].shape == shape:
            options += [(f"{src}.copy()", 2), (f"np.zeros_like({src})", 1)]
        how = self.pick(options)
        self.use("local_arrays")
        if how == "empty":
            fn.emit(f"{name} = np.empty({dims})")
            loops = []
            for d, L in enumerate(shape):
                i = ["i", "j", "l"][d]
                fn.kinds.setdefault(i, "i")
                fn.emit("    " * d + f"for {i} in range({self.size_expr(sc, L)}):")
                loops.append(i)
            inner = sc.child(in_loop=True, loop="for", loop_vars=frozenset(loops))
            for d, i in enumerate(loops):
                inner.ints[i] = (0, shape[d] - 1)
            value = self.fexpr(inner, 1)
            fn.emit("    " * len(shape) + f"{name}[{', '.join(loops)}] = {value}")
        else:
            fn.emit(f"{name} = {how}")
        sc.arrays[name] = _Arr(shape, True, local=True)
        return name

    # --- statements ---

    def block(self, sc: _Scope, depth: int, count: int) -> None:
        """`count` statements (at least one line is always emitted into an open suite)."""
        start = len(self.fn.lines)
        for _ in range(count):
            if self.budget <= 0 and len(self.fn.lines) > start:
                break
            self.budget -= 1
            self.stmt(sc, depth)
        if len(self.fn.lines) == start:
            self.assign_float(sc)

    def suite(self, sc: _Scope, depth: int, count: int) -> None:
        self.fn.indent += 1
        self.block(sc, depth, count)
        self.fn.indent -= 1

    def stmt(self, sc: _Scope, depth: int) -> None:
        self.extras.maybe(self, sc)
        f = self.features
        loop_ok = depth > 0 and sc.loop_depth < (3 if "nested" in f else 1) and not sc.in_prange
        writable = [nm for nm, a in sc.arrays.items() if a.writable]
        top = not sc.in_loop and not self.in_helper
        options = [
            ("assign", 4),
            ("aug", 3 if "augassign" in f and sc.floats else 0),
            ("write", 4 if writable and "arrays" in f else 0),
            ("for", 4 if loop_ok and "for" in f else 0),
            ("while", 1 if loop_ok and "while" in f and not sc.in_prange else 0),
            ("if", 2 if depth > 0 and "if" in f else 0),
            ("break", 1 if sc.loop in ("for", "while") and "break" in f else 0),
            ("continue", 1 if sc.loop in ("for", "while") and "continue" in f else 0),
            ("return", 1 if "early_return" in f and (sc.in_loop or depth < 3) and not sc.in_prange else 0),
            ("swap", 1 if "swap" in f else 0),
            ("tuple_assign", 1 if "tuple_assign" in f and sc.floats else 0),
            ("helper", 2 if self.helpers and not sc.in_prange else 0),
            ("int", 1 if "int_locals" in f else 0),
            ("whole", 2 if "whole" in f and (top or "whole_in_loops" in f) and sc.arrays else 0),
            ("slice_write", 0.5 if "slice_write" in f and top and writable else 0),
            ("tuple", 0.6 if "tuples" in f else 0),
            ("stencil", 0.7 if "stencil" in f and loop_ok and "for" in f else 0),
            ("scratch", 0.7 if "scratch" in f and sc.in_loop and not sc.in_prange and "for" in f else 0),
            ("select", 0.7 if "select" in f and loop_ok and "for" in f and "if" in f else 0),
            ("prange", 0.5 if "prange" in f and not sc.in_prange and sc.arrays and sc.loop_depth < 2 else 0),
            ("alloc", 0.5 if "local_arrays" in f and (top or "alloc_in_loops" in f) and not self.in_helper else 0),
        ]
        kind = self.pick(options)
        getattr(self, f"s_{kind}")(sc, depth)

    def assign_float(self, sc: _Scope, name: str | None = None) -> None:
        value = self.fexpr(sc, 3)
        if name is None:
            reuse = list(sc.floats) if self.rnd.random() < 0.4 else []
            name = self.rnd.choice(reuse) if reuse else self.fresh("f", _PLAIN_LOCALS)
        self.fn.emit(f"{name} = {value}")
        if name not in sc.floats:
            sc.floats.append(name)

    def s_assign(self, sc: _Scope, depth: int) -> None:
        self.assign_float(sc)

    def s_aug(self, sc: _Scope, depth: int) -> None:
        self.use("augassign")
        target = self.rnd.choice(sc.floats)
        ints = [i for i in sc.ints]
        op = self.pick(
            [
                (f"+= {self.fexpr(sc, 2)}", 4),
                (f"-= {self.fexpr(sc, 2)}", 2),
                ("+= 1.0", 1),
                (f"+= {self.rnd.choice(ints) if ints else '2'}", 1),
                (f"-= {self.const()}", 0.5),
                (f"*= {self.factor(sc)}", 1.5),
                (f"/= {self.denominator(sc)}", 1.5),
                ("**= 2", 0.3),
            ]
        )
        self.fn.emit(f"{target} {op}")

    def factor(self, sc: _Scope) -> str:
        e = self.fleaf(sc)
        options = ["0.5", "1.1", e, "-1.0"]
        if "math" in self.features:
            options += [f"math.cos({e})", f"(1.0 + 0.5 * math.sin({e}))"]
        return self.rnd.choice(options)

    def denominator(self, sc: _Scope) -> str:
        e = self.fleaf(sc)
        options = ["2.0", f"(1.0 + {e} * {e})", "3.0"]
        if "math" in self.features:
            options.append(f"(2.0 + math.cos({e}))")
        return self.rnd.choice(options)

    def mark_written(self, sc: _Scope, name: str) -> None:
        arr = sc.arrays[name]
        if arr.param is not None:
            self.fn.written.add(arr.param)
            if not arr.local and not self.in_helper:
                self.use("write_args")

    def write_elem(self, sc: _Scope, name: str | None = None) -> None:
        if name is None:
            name = self.rnd.choice([nm for nm, a in sc.arrays.items() if a.writable])
        arr = sc.arrays[name]
        index = ", ".join(self.index(sc, L) for L in arr.shape)
        op = self.pick(
            [
                (f"= {self.fexpr(sc, 3)}", 4),
                (f"+= {self.fexpr(sc, 2)}", 3 if "augassign" in self.features else 0),
                (f"-= {self.fexpr(sc, 2)}", 1 if "augassign" in self.features else 0),
                (f"+= {self.rnd.choice(['2.0', '1.0', '0.5'])}", 1 if "augassign" in self.features else 0),
                (f"*= {self.factor(sc)}", 1 if "augassign" in self.features else 0),
                (f"/= {self.denominator(sc)}", 1 if "augassign" in self.features else 0),
            ]
        )
        self.mark_written(sc, name)
        self.fn.emit(f"{name}[{index}] {op}")

    def s_write(self, sc: _Scope, depth: int) -> None:
        self.write_elem(sc)

    def for_scope(self, sc: _Scope) -> tuple[str, str, tuple[int, int], _Scope]:
        """A new `for` loop's range, variable and its values, and the scope of its body."""
        header, var, interval, trips = self.range_header(sc)
        inner = sc.child(loop="for", in_loop=True, iters=sc.iters * max(trips, 1), loop_depth=sc.loop_depth + 1,
                         loop_vars=sc.loop_vars | {var}, in_prange=sc.in_prange)  # fmt: skip
        inner.ints[var] = interval
        if sc.loop_depth > 0:
            self.use("nested")
        return header, var, interval, inner

    def s_for(self, sc: _Scope, depth: int) -> None:
        header, var, interval, inner = self.for_scope(sc)
        # read after the loop: its last value, or 0 where it ran no iteration
        carried = interval[0] is not None and interval[0] >= 0 and not sc.in_prange and self.on("after_loop", 0.2)
        if carried:
            self.fn.emit(f"{var} = 0")
        self.fn.emit(f"for {var} in {header}:")
        self.fn.indent += 1
        if self.on("recompute", 0.4):
            self.prefix(inner, var, interval, header)
        elif self.on("scratch", 0.3) and not sc.in_prange:  # a step that fills its scratch first
            self.s_scratch(inner, depth)
        self.block(inner, depth - 1, self.rnd.randint(1, 3))
        self.fn.indent -= 1
        if carried:
            self.use("after_loop")
            sc.ints[var] = (0, interval[1])

    def prefix(self, sc: _Scope, var: str, interval: tuple[int, int], header: str = "") -> None:
        """What recompute.py may compute again instead of recording: a periodic neighbour of the loop
        variable (by `%`, or as numba users write a ring index, `k = i + 1; if k == n: k = 0`, with
        the loop's own bound where it is `range(n)`: rings.py), then a float of arithmetic on array
        elements and constants, used nonlinearly.
        (Whether it is recomputed depends on the rest: a later write of those arrays, or of the new
        names, must keep the records.)"""
        rnd = self.rnd
        readable = [(nm, a) for nm, a in sc.arrays.items() if a.ints is None]
        if not readable or interval[0] < 0:
            return
        self.use("recompute")
        nm, a = rnd.choice(readable)
        L = a.shape[0]
        if rnd.random() < 0.6 and interval[1] is not None:
            k = self.fresh("i", _PLAIN_INTS)
            own = re.fullmatch(r"range\(([^,]+)\)", header)
            if interval[1] <= L - 1 and rnd.random() < 0.5:  # a ring index: var in 0 .. L - 1
                size = own.group(1) if own and interval == (0, L - 1) else self.size_expr(sc, L)
                if rnd.random() < 0.5:
                    self.fn.emit(f"{k} = {var} + 1")
                    self.fn.emit(f"if {k} == {size}:" if rnd.random() < 0.5 else f"if {k} >= {size}:")
                    self.fn.emit(f"    {k} = 0" if rnd.random() < 0.5 else f"    {k} -= {size}")
                else:
                    self.fn.emit(f"{k} = {var} - 1")
                    self.fn.emit(f"if {k} < 0:")
                    self.fn.emit(f"    {k} = {size} - 1" if rnd.random() < 0.5 else f"    {k} += {size}")
            else:
                S = self.size_expr(sc, L)
                step = rnd.choice([" + 1", " + 2", " - 1", f" + {S} - 1"])  # +-1: a ring index (normalize)
                self.fn.emit(f"{k} = ({var}{step}) % {S}")
            sc.ints[k] = (0, L - 1)
            # one array written with the loop variable on different axes: two iterations may
            # write one element, so the reversal must keep the loop's order reversed
            square = [
                nm2 for nm2, a2 in sc.arrays.items()
                if a2.writable and a2.ints is None and len(a2.shape) == 2 and min(a2.shape) >= L
                and interval[0] >= 0 and interval[1] <= L - 1
            ]  # fmt: skip
            if square and rnd.random() < 0.3:
                target = rnd.choice(square)
                self.mark_written(sc, target)
                self.fn.emit(f"{target}[{var}, {k}] = {self.fexpr(sc, 2)}")
                self.fn.emit(f"{target}[{k}, {var}] = {self.fexpr(sc, 2)}")

        def elem() -> str:
            name, arr = rnd.choice(readable)
            return f"{name}[{', '.join(self.index(sc, n) for n in arr.shape)}]"

        value = rnd.choice([f"{elem()} - {elem()}", f"{self.const()} * {elem()} + {elem()}", f"{elem()} / 2.0"])
        if "math" in self.features and rnd.random() < 0.3:  # a call the primitive table calls cheap
            value = f"math.sqrt({value} * {value} + 0.5)"
        # a name the function uses elsewhere too, sometimes: then the reversed loop leaves it as
        # its first iteration computed it, which is right only where nothing needs it at the loop's entry
        reused = [f for f in sc.floats if f not in sc.loop_vars]
        name = rnd.choice(reused) if reused and rnd.random() < 0.3 else self.fresh("f", _PLAIN_LOCALS)
        self.fn.emit(f"{name} = {value}")
        if rnd.random() < 0.25:  # overwritten after a read of it: the prefix must end before
            self.fn.emit(f"{name} = {name} * {rnd.choice([name, elem()])}")
        if name not in sc.floats:
            sc.floats.append(name)
        if len(sc.floats) > 1:
            acc = rnd.choice(sc.floats[:-1])
            self.fn.emit(f"{acc} += {name} * {name if rnd.random() < 0.7 else self.fleaf(sc)}")

    def range_header(self, sc: _Scope) -> tuple[str, str, tuple[int, int], int]:
        """A range(...) for a new loop: its text, the loop variable, the variable's range of
        values and the trip count (an upper bound)."""
        rnd = self.rnd
        f = self.features
        self.use("for")
        var = self.fresh_loop_var(sc)
        room = MAX_ITERS // sc.iters
        sizes = sorted({L for a in sc.arrays.values() for L in a.shape if L <= room})
        outer = [(v, iv) for v, iv in sc.ints.items() if v in sc.loop_vars and iv[1] is not None and iv[0] <= iv[1]]
        steps = [v for v, iv in sc.ints.items() if iv[0] == iv[1] and iv[0] is not None and 1 <= iv[0] <= 3]
        trip_params = [v for v, iv in sc.ints.items() if iv[0] == iv[1] and 0 <= iv[0] <= 4 and v not in sc.loop_vars]
        kind = self.pick(
            [
                ("index", 6 if sizes else 0),
                ("tri", 4 if outer and sizes and "triangular" in f else 0),
                ("time", 1.5 if room >= 4 else 0),
                ("zero", 0.5 if "zerotrip" in f else 0),
            ]
        )
        if kind == "time" or (kind in ("index", "tri") and not sizes):
            if trip_params and rnd.random() < 0.6:
                t = rnd.choice(trip_params)
                self.use("int_params")
                T = sc.ints[t][0]
                return f"range({t})", var, (0, max(T - 1, 0)), T
            T = rnd.randint(1, 4)
            return f"range({T})", var, (0, T - 1), T
        if kind == "zero":
            self.use("zerotrip")
            L = rnd.choice(sizes) if sizes else 3
            S = self.size_expr(sc, L)
            header = rnd.choice([f"range({S}, {S})", "range(0)", f"range({S} - {S})", f"range({S}, 0)",
                                 f"range(0, {S}, -1)", "range(2, 1)"])  # fmt: skip
            return header, var, (0, L - 1), 0
        if kind == "tri":
            self.use("triangular")
            o, (lo, hi) = rnd.choice(outer)
            fitting = [L for L in sizes if hi <= L - 1] or sizes
            L = rnd.choice(fitting)
            if hi > L - 1:
                kind = "index"
            else:
                S = self.size_expr(sc, L)
                options = [
                    (f"range({o} + 1, {S})", (lo + 1, L - 1)),
                    (f"range({o})", (0, hi - 1)),
                    (f"range({o}, {S})", (lo, L - 1)),
                    (f"range({S} - 1, {o}, -1)", (lo + 1, L - 1)),
                ]
                header, interval = rnd.choice(options)
                return header, var, interval, L
        # an index loop over an array dimension
        prefer = [L for L in sizes if L not in [iv[1] + 1 for _, iv in outer]]
        L = rnd.choice(prefer if prefer and rnd.random() < 0.6 else sizes)
        S = self.size_expr(sc, L)
        options = [
            (f"range({S})", (0, L - 1), 6),
            (f"range(1, {S})", (1, L - 1), 1),
            (f"range({S} - 1)", (0, L - 2), 1),
            (f"range(1, {S} - 1)", (1, L - 2), 0.5),
            (f"range({S} - 1, -1, -1)", (0, L - 1), 1.5 if "for" in f else 0),
            (f"range({S} - 1, 0, -1)", (1, L - 1), 0.5),
            (f"range(0, {S}, 2)", (0, L - 1), 1),
            (f"range({S} - 1, -1, -2)", (0, L - 1), 0.5),
        ]
        if steps:
            st = rnd.choice(steps)
            options += [(f"range(0, {S}, {st})", (0, L - 1), 1), (f"range({S} - 1, -1, -{st})", (0, L - 1), 1)]
        starts = [v for v, iv in sc.ints.items() if iv[0] == iv[1] and 0 <= iv[0] and v not in sc.loop_vars]
        if starts:
            k = rnd.choice(starts)
            options.append((f"range({k}, {S})", (sc.ints[k][0], L - 1), 1))
        header, interval = self.pick([((h, iv), w) for h, iv, w in options])
        return header, var, interval, L

    def s_while(self, sc: _Scope, depth: int) -> None:
        self.use("while")
        rnd = self.rnd
        counter = self.fresh("i", ["it", "count", "nit", "cnt"])
        K = rnd.randint(1, 5)
        if K * sc.iters > MAX_ITERS:
            K = 1
        bound = str(K)
        bounds = [v for v, iv in sc.ints.items() if iv[0] == iv[1] and 0 <= iv[0] <= 5]
        if bounds and rnd.random() < 0.3:
            bound = rnd.choice(bounds)
            K = sc.ints[bound][0]
        cond = f"{counter} < {bound}"
        if "compare" in self.features and rnd.random() < 0.5:
            helpers, self.helpers = self.helpers, []  # a while condition cannot call user functions
            cond += f" and {self.fcond(sc)}"
            self.helpers = helpers
        self.fn.emit(f"{counter} = 0")
        self.fn.emit(f"while {cond}:")
        inner = sc.child(loop="while", in_loop=True, iters=sc.iters * max(K, 1), loop_depth=sc.loop_depth + 1)
        self.fn.indent += 1
        self.fn.emit(f"{counter} += 1")
        inner.ints[counter] = (1, K)
        self.block(inner, depth - 1, rnd.randint(1, 3))
        self.fn.indent -= 1
        sc.ints[counter] = (0, K)

    def s_if(self, sc: _Scope, depth: int) -> None:
        self.use("if")
        self.fn.emit(f"if {self.cond(sc)}:")
        self.suite(sc.child(), depth - 1, self.rnd.randint(1, 2))
        while self.rnd.random() < 0.3:
            self.fn.emit(f"elif {self.cond(sc)}:")
            self.suite(sc.child(), depth - 1, 1)
        if self.rnd.random() < 0.5:
            self.fn.emit("else:")
            self.suite(sc.child(), depth - 1, self.rnd.randint(1, 2))

    def s_break(self, sc: _Scope, depth: int) -> None:
        self.jump(sc, "break")

    def s_continue(self, sc: _Scope, depth: int) -> None:
        self.jump(sc, "continue")

    def jump(self, sc: _Scope, what: str) -> None:
        self.use(what)
        if self.rnd.random() < 0.15:
            self.fn.emit(what)
            return
        self.fn.emit(f"if {self.cond(sc)}:")
        self.fn.emit(f"    {what}")

    def s_return(self, sc: _Scope, depth: int) -> None:
        if self.fn.result is None:  # a helper called for its writes: a bare return is not in the subset
            self.assign_float(sc)
            return
        self.use("early_return")
        self.fn.emit(f"if {self.cond(sc)}:")
        self.fn.indent += 1
        self.fn.emit(f"return {self.return_expr(sc.child())}")
        self.fn.indent -= 1

    def s_swap(self, sc: _Scope, depth: int) -> None:
        rnd = self.rnd
        locals_ = [nm for nm, a in sc.arrays.items() if a.local]
        pairs = [(p, q) for p in locals_ for q in locals_ if p < q and sc.arrays[p].shape == sc.arrays[q].shape]
        if pairs and rnd.random() < 0.5:
            p, q = rnd.choice(pairs)
            self.use("swap")
            self.fn.emit(f"{p}, {q} = {q}, {p}")
            return
        if len(sc.floats) >= 2:
            p, q = rnd.sample(sc.floats, 2)
            self.use("swap")
            self.fn.emit(f"{p}, {q} = {q}, {p}")
            return
        self.assign_float(sc)

    def s_tuple_assign(self, sc: _Scope, depth: int) -> None:
        rnd = self.rnd
        self.use("tuple_assign")
        p = rnd.choice(sc.floats)
        others = [f for f in sc.floats if f != p]
        q = rnd.choice(others) if others and rnd.random() < 0.7 else self.fresh("f", _PLAIN_LOCALS)
        left, right = f"{p}, {q}", f"{self.fexpr(sc, 1) if q not in sc.floats else q}, {self.fexpr(sc, 2)}"
        if q in sc.floats and rnd.random() < 0.5:
            right = f"{q}, {p} * {self.const()}"
        self.fn.emit(f"{left} = {right}")
        for name in (p, q):
            if name not in sc.floats:
                sc.floats.append(name)

    def s_helper(self, sc: _Scope, depth: int) -> None:
        rnd = self.rnd
        want = rnd.choice(["f", "t", "any"])
        call = self.call_helper(sc, want)
        if call is None:
            self.assign_float(sc)
            return
        helper = next(h for h in self.helpers if call.startswith(h.name + "("))
        if helper.returns == "t":
            p = self.fresh("f", _PLAIN_LOCALS)
            q = self.fresh("f", _PLAIN_LOCALS)
            self.fn.emit(f"{p}, {q} = {call}")
            sc.floats += [p, q]
        elif helper.returns == "f" and rnd.random() < 0.85:
            name = self.fresh("f", _PLAIN_LOCALS)
            extra = f"{self.fleaf(sc)} * 1.0 + " if rnd.random() < 0.3 else ""
            self.fn.emit(f"{name} = {extra}{call}")
            sc.floats.append(name)
        else:
            self.fn.emit(call)

    def s_int(self, sc: _Scope, depth: int) -> None:
        rnd = self.rnd
        self.use("int_locals")
        name = self.fresh("i", _PLAIN_INTS)
        sizes = sorted({L for a in sc.arrays.values() for L in a.shape})
        bounded = [(v, iv) for v, iv in sc.ints.items() if iv[1] is not None and iv[0] >= 0]
        options: list[tuple[tuple[str, tuple[int, int | None]], float]] = [(("0", (0, 0)), 1)]
        for v, (lo, hi) in bounded:
            options.append(((f"{v} + 1", (lo + 1, hi + 1)), 1))  # type: ignore[operator]
            options.append(((f"{v} // 2", (lo // 2, hi // 2)), 1))  # type: ignore[operator]
            for L in sizes:
                S = self.size_expr(sc, L)
                options.append(((f"({v} + 1) % {S}", (0, L - 1)), 1))
                options.append(((f"min({v} + 1, {S} - 1)", (min(lo + 1, L - 1), min(hi + 1, L - 1))), 0.5))  # type: ignore[operator]
                options.append(((f"max({v} - 1, 0)", (max(lo - 1, 0), max(hi - 1, 0))), 0.5))  # type: ignore[operator]
        for L in sizes:
            S = self.size_expr(sc, L)
            options.append(((f"{S} // 2", (L // 2, L // 2)), 1))
            options.append(((f"{S} - 1", (L - 1, L - 1)), 1))
            if "int_from_float" in self.features and sc.floats:
                e = self.fleaf(sc)
                conv = rnd.choice([f"int(3.0 * math.sin({e}))", f"round({e})", f"math.floor({e})"])
                options.append(((f"{conv} % {S}", (0, L - 1)), 1))
        (text, interval) = self.pick(options)
        if "int_from_float" in text or any(k in text for k in ("int(", "round(", "floor(")):
            self.use("int_from_float")
        if sc.in_loop and rnd.random() < 0.3 and "augassign" in self.features:
            # a counter: defined before use in this block, incremented
            self.fn.emit(f"{name} = 0")
            self.fn.emit(f"{name} += 1")
            sc.ints[name] = (1, 1)
            return
        self.fn.emit(f"{name} = {text}")
        sc.ints[name] = interval

    def s_tuple(self, sc: _Scope, depth: int) -> None:
        self.use("tuples")
        name = self.fresh("t", ["p", "pt", "pair_v", "tup"])
        self.fn.emit(f"{name} = ({self.fexpr(sc, 2)}, {self.fexpr(sc, 2)})")
        sc.tuples[name] = 2
        use = self.fresh("f", _PLAIN_LOCALS)
        self.fn.emit(f"{use} = {name}[0] * {name}[1]" if self.rnd.random() < 0.5 else f"{use} = {name}[1] - {name}[0]")
        sc.floats.append(use)

    def s_alloc(self, sc: _Scope, depth: int) -> None:
        if sc.in_loop:
            self.use("alloc_in_loops")
        self.alloc_array(sc)

    def s_stencil(self, sc: _Scope, depth: int) -> None:
        """`for i in range(a, L - b): y[..i..] = ...` of elements `x[..i + c..]` at constant offsets c
        (linear terms, products of two neighbours, loop-invariant floats), sometimes with a scalar
        sum of its own: the shape whose adjoint gather.py gathers. y is never read in the loop and
        x never written, so the reversal runs in the loop's order."""
        rnd = self.rnd
        sources = [(nm, a) for nm, a in sc.arrays.items() if a.ints is None]
        pairs = [
            (x, y, axis)
            for x, a in sources
            for y, b in sc.arrays.items()
            if y != x and b.writable and b.ints is None and len(b.shape) == len(a.shape)
            for axis in range(len(a.shape))
            if a.shape[axis] == b.shape[axis] and a.shape[axis] >= 3 and sc.iters * a.shape[axis] <= MAX_ITERS
        ]
        if not pairs:
            self.assign_float(sc)
            return
        self.use("stencil")
        x, y, axis = rnd.choice(pairs)
        L = sc.arrays[x].shape[axis]
        lo, hi = -rnd.randint(0, 2), rnd.randint(0, 2)
        if hi - lo >= L:
            lo, hi = -1, 1
        var = self.fresh_loop_var(sc)
        S = self.size_expr(sc, L)
        start = -lo + (1 if rnd.random() < 0.2 else 0)
        stop = f"{S} - {hi}" if hi else S
        inner = sc.child(loop="for", in_loop=True, iters=sc.iters * L, loop_depth=sc.loop_depth + 1,
                         loop_vars=sc.loop_vars | {var}, in_prange=sc.in_prange)  # fmt: skip
        inner.ints[var] = (start, L - 1 - hi)
        del inner.arrays[y]  # the loop reads what it does not write

        def at(name: str, c: int) -> str:
            offset = var if c == 0 else f"{var} + {c}" if c > 0 else f"{var} - {-c}"
            shape = sc.arrays[name].shape
            others = [self.index(sc, n) for n in shape]  # the other axes: fixed in the loop
            others[axis] = offset
            return f"{name}[{', '.join(others)}]"

        offsets = sorted({lo, hi, rnd.randint(lo, hi)})
        terms = []
        for c in offsets:
            r = rnd.random()
            if r < 0.5:
                terms.append(f"{self.const()} * {at(x, c)}")
            elif r < 0.8:
                terms.append(f"{at(x, c)} * {at(x, rnd.choice(offsets))}")
            else:
                terms.append(f"{self.fleaf(inner, arrays=False)} * {at(x, c)}")
        self.fn.emit(f"for {var} in range({start}, {stop}):")
        self.fn.indent += 1
        target = at(y, 0)
        self.mark_written(sc, y)
        self.fn.emit(f"{target} = {' + '.join(terms)}")
        if sc.floats and rnd.random() < 0.3:  # a sum of its own, read nowhere else in the loop
            acc = rnd.choice(sc.floats)
            self.fn.emit(f"{acc} += {at(x, rnd.choice(offsets))} * {at(x, 0)}")
        self.fn.indent -= 1

    def s_scratch(self, sc: _Scope, depth: int) -> None:
        """A local 1-D array filled over its whole range inside a loop, as RK4 fills its stages
        each step: by one loop, or by a write of one end and a loop over the rest. Whether a step
        reads it before filling it depends on what else the loop does (coverage.py)."""
        rnd = self.rnd
        local = [nm for nm, a in sc.arrays.items() if a.local and a.writable and a.ints is None and len(a.shape) == 1]
        if not local:
            return self.assign_float(sc)
        self.use("scratch")
        name = rnd.choice(local)
        self.mark_written(sc, name)
        L = sc.arrays[name].shape[0]
        S = self.size_expr(sc, L)
        var = self.fresh_loop_var(sc)
        inner = sc.child(loop="for", in_loop=True, iters=sc.iters * L, loop_depth=sc.loop_depth + 1,
                         loop_vars=sc.loop_vars | {var})  # fmt: skip
        how = rnd.choice(["whole", "first", "last"])
        lo, hi, header = {"whole": (0, L - 1, f"range({S})"), "first": (1, L - 1, f"range(1, {S})"),
                          "last": (0, L - 2, f"range({S} - 1)")}[how]  # fmt: skip
        inner.ints[var] = (lo, hi)
        if how == "first":
            self.fn.emit(f"{name}[0] = {self.fexpr(sc, 2)}")
        self.fn.emit(f"for {var} in {header}:")
        self.fn.emit(f"    {name}[{var}] = {self.fexpr(inner, 2)}")
        if how == "last":
            self.fn.emit(f"{name}[{S} - 1] = {self.fexpr(sc, 2)}")

    def s_select(self, sc: _Scope, depth: int) -> None:
        """A running minimum or maximum: a loop whose branch overwrites a float the loop carries
        (`if c < best: best = c`), sometimes a second one with it, whose reversal stops after the
        iteration that took the branch last (ReversePlan.early_exit) and must pop exactly the
        records of the iterations it skips."""
        rnd = self.rnd
        self.use("select")
        best = self.fresh("f", _PLAIN_LOCALS)
        op = rnd.choice(["<", ">", "<=", ">="])
        if "inf" in self.features and rnd.random() < 0.4:
            self.use("inf")
            self.fn.emit(f"{best} = {'' if op[0] == '<' else '-'}{rnd.choice(['math.inf', 'np.inf'])}")
        else:
            self.fn.emit(f"{best} = {self.fexpr(sc, 2)}")
        header, var, _, inner = self.for_scope(sc)
        candidate = self.fresh("f", _PLAIN_LOCALS)
        second = [v for v in sc.floats if v != best] if rnd.random() < 0.4 else []
        self.fn.emit(f"for {var} in {header}:")
        self.fn.indent += 1
        self.fn.emit(f"{candidate} = {self.fexpr(inner, 2)}")
        inner.floats.append(candidate)
        if rnd.random() < 0.3:  # other work in the iteration: records the pop must skip too
            self.block(inner, depth - 1, 1)
        self.fn.emit(f"if {candidate} {op} {best}:")
        self.fn.emit(f"    {best} = {candidate}")
        if second:
            self.fn.emit(f"    {rnd.choice(second)} = {self.fexpr(inner, 1)}")
        self.fn.indent -= 1
        if best not in sc.floats:
            sc.floats.append(best)

    def s_prange(self, sc: _Scope, depth: int) -> None:
        rnd = self.rnd
        arrays = [(nm, a) for nm, a in sc.arrays.items() if a.ints is None]
        if not arrays:  # only index arrays in scope (+index_arrays)
            self.assign_float(sc)
            return
        nm, a = rnd.choice(arrays)
        L = a.shape[0]
        if L * sc.iters > MAX_ITERS:
            self.assign_float(sc)
            return
        self.use("prange")
        var = self.fresh_loop_var(sc)
        inner = sc.child(loop="prange", in_loop=True, in_prange=True, iters=sc.iters * L,
                         loop_depth=sc.loop_depth + 1, loop_vars=sc.loop_vars | {var})  # fmt: skip
        inner.ints[var] = (0, L - 1)
        # the body reads arrays and loop-invariant floats, never what it writes
        targets = [t for t, b in sc.arrays.items() if b.writable and b.shape[0] == L and t != nm]
        inner.arrays = {k: v for k, v in inner.arrays.items() if k not in targets}
        accs = list(sc.floats)
        inner.floats = [f for f in sc.floats if self.rnd.random() < 0.5 or not accs]
        self.fn.emit(f"for {var} in numba.prange({self.size_expr(sc, L)}):")
        self.fn.indent += 1
        if targets and rnd.random() < 0.6:
            t = rnd.choice(targets)
            shape = sc.arrays[t].shape
            if rnd.random() < 0.4:
                tmp = self.fresh("f", _PLAIN_LOCALS)
                self.fn.emit(f"{tmp} = {self.fexpr(inner, 2)}")
                inner.floats.append(tmp)
            rest = ", ".join(self.index(inner, Lk) for Lk in shape[1:])
            index = f"{var}, {rest}" if rest else var
            self.fn.emit(f"{t}[{index}] = {self.fexpr(inner, 2)}")
            self.mark_written(sc, t)
        else:
            acc = rnd.choice(sc.floats or [None])
            if acc is None:
                acc = self.fresh("f", _PLAIN_LOCALS)
                self.fn.lines.insert(len(self.fn.lines) - 1, "    " * (self.fn.indent - 1) + f"{acc} = 0.0")
                sc.floats.append(acc)
            inner.floats = [f for f in inner.floats if f != acc]
            if rnd.random() < 0.4:
                tmp = self.fresh("f", _PLAIN_LOCALS)
                self.fn.emit(f"{tmp} = {self.fexpr(inner, 2)}")
                inner.floats.append(tmp)
            self.fn.emit(f"{acc} += {self.fexpr(inner, 2)}")
        self.fn.indent -= 1

    def s_whole(self, sc: _Scope, depth: int) -> None:
        rnd = self.rnd
        self.use("whole")
        if sc.in_loop:
            self.use("whole_in_loops")
        if rnd.random() < 0.5:
            shape = rnd.choice([a.shape for a in sc.arrays.values() if a.ints is None and len(a.shape) <= 2] or [None])
            if shape is not None:
                expr = self.aexpr(sc, shape, 2)
                if expr is not None and expr.isidentifier():  # `r = y` would alias y: not in the subset
                    expr = f"{expr}.copy()"
                if expr is not None:
                    name = self.fresh("a", ["r", "d", "g_a", "res", "diff", "sq"])
                    self.fn.emit(f"{name} = {expr}")
                    sc.arrays[name] = _Arr(shape, False)
                    return
        name = self.fresh("f", _PLAIN_LOCALS)
        self.fn.emit(f"{name} = {self.reduction(sc)}")
        sc.floats.append(name)

    def s_slice_write(self, sc: _Scope, depth: int) -> None:
        locals_ = [nm for nm, a in sc.arrays.items() if a.writable and len(a.shape) == 1 and a.shape[0] >= 2]
        if not locals_:
            self.write_elem(sc)
            return
        self.use("slice_write")
        y = self.rnd.choice(locals_)
        L = sc.arrays[y].shape[0]
        part, shape = self.rnd.choice([("1:", (L - 1,)), (":-1", (L - 1,)), (":", (L,)), ("::2", ((L + 1) // 2,))])
        value = self.aexpr(sc, shape, 1) or self.fexpr(sc, 1)
        self.mark_written(sc, y)
        self.fn.emit(f"{y}[{part}] = {value}")

    # --- whole-array expressions ---

    def aexpr(self, sc: _Scope, shape: tuple[int, ...], depth: int) -> str | None:
        """An array-valued expression of `shape`, or None when nothing in scope makes one."""
        rnd = self.rnd
        arrays = {nm: a for nm, a in sc.arrays.items() if a.ints is None}
        same = [nm for nm, a in arrays.items() if a.shape == shape]
        options: list[tuple[str, float]] = []
        for nm in same:
            options.append((nm, 3))
        if len(shape) == 1:
            L = shape[0]
            for nm, a in arrays.items():
                if a.shape == (L + 1,):
                    options += [(f"({nm}[1:] - {nm}[:-1])", 2), (f"{nm}[1:]", 1), (f"{nm}[:-1]", 1)]
                if len(a.shape) == 1 and (a.shape[0] + 1) // 2 == L and a.shape[0] > 1:
                    options.append((f"{nm}[::2]", 1))
                if len(a.shape) == 2:
                    r, c = a.shape
                    if r == L:
                        options.append((f"{nm}[:, {self.index(sc, c)}]", 1))
                        options.append((f"np.sum({nm}, axis=1)", 1))
                        options.append((f"np.mean({nm}, axis=1)", 0.5))
                        vec = [v for v, b in arrays.items() if b.shape == (c,)]
                        if vec:
                            v = rnd.choice(vec)
                            options += [(f"({nm} @ {v})", 2), (f"np.dot({nm}, {v})", 1)]
                    if c == L:
                        options.append((f"{nm}[{self.index(sc, r)}, :]", 1))
                        options.append((f"{nm}.sum(axis=0)", 1))
                        vec = [v for v, b in arrays.items() if b.shape == (r,)]
                        if vec:
                            options.append((f"({rnd.choice(vec)} @ {nm})", 1))
                            options.append((f"({nm}.T @ {rnd.choice(vec)})", 1))
        if len(shape) == 2:
            r, c = shape
            for nm, a in arrays.items():
                if a.shape == (c, r):
                    options.append((f"{nm}.T", 1))
            vr = [v for v, b in arrays.items() if b.shape == (r,)]
            vc = [v for v, b in arrays.items() if b.shape == (c,)]
            if vr and vc:
                options.append((f"np.outer({rnd.choice(vr)}, {rnd.choice(vc)})", 1))
        if not options:
            return None
        base = self.pick(options)
        if depth <= 0:
            return base
        s = self.fleaf(sc.child(floats=[f for f in sc.floats]), arrays=False)
        other = self.aexpr(sc, shape, depth - 1) or base
        if len(shape) == 2:  # broadcasting a row vector over a matrix
            rows = [v for v, b in arrays.items() if b.shape == (shape[1],)]
            if rows and rnd.random() < 0.4:
                other = f"({other} + {rnd.choice(rows)})"
        form = self.pick(
            [
                (base, 1),
                (f"({base} * {s})", 2),
                (f"({base} + {other})", 2),
                (f"({base} * {other})", 2),
                (f"({base} - {s} * {other})", 1),
                (rnd.choice(_ELEMENTWISE).format(base, base), 2),
                (f"({base} / (1.0 + {other} * {other}))", 1),
                (f"np.where({base} > 0.0, {base}, {self.const()} * {other})", 0.5),
                (f"np.clip({base}, -1.0, 1.0)", 0.5),
                (f"np.cumsum({base})" if len(shape) == 1 else base, 0.3),
                (f"np.maximum({base}, {other})", 0.3),
            ]
        )
        return form

    def reduction(self, sc: _Scope) -> str:
        rnd = self.rnd
        arrays = [(nm, a) for nm, a in sc.arrays.items() if a.ints is None and len(a.shape) <= 2]
        if not arrays:
            return self.fexpr(sc, 1)
        nm, a = rnd.choice(arrays)
        inner = self.aexpr(sc, a.shape, 1) or nm
        options = [
            (f"np.sum({inner})", 4),
            (f"np.mean({inner})", 2),
            (f"np.max({inner})", 1),
            (f"np.min({inner})", 1),
            (f"{nm}.sum()", 1),
            (f"np.linalg.norm({inner})", 1),
            (f"np.prod(np.cos({nm}))", 0.5),
        ]
        if len(a.shape) == 1:
            same = [m for m, b in arrays if b.shape == a.shape]
            other = rnd.choice(same)
            options += [(f"np.dot({inner}, {other})", 2), (f"({nm} @ {other})", 1)]
        return self.pick(options)

    # --- scalar expressions ---

    def size_expr(self, sc: _Scope, L: int) -> str:
        options = [name for name, (lo, hi) in sc.ints.items() if lo == hi == L and name not in sc.loop_vars]
        for nm, a in sc.arrays.items():
            for d, size in enumerate(a.shape):
                if size == L:
                    options.append(f"{nm}.shape[{d}]")
                    if d == 0 and self.rnd.random() < 0.3:
                        options.append(f"len({nm})")
        if not options:
            return str(L)
        return self.rnd.choice(options)

    def index(self, sc: _Scope, L: int) -> str:
        """An int expression that is a valid index into a dimension of size L."""
        rnd = self.rnd
        neg = "negindex" in self.features
        options: list[tuple[str, float]] = [("0", 0.5)]
        if L > 1:
            options.append(("1", 0.3))
        options.append((f"{self.size_expr(sc, L)} - 1", 0.4))
        if neg:
            options.append(("-1", 0.1))
        for name, (lo, hi) in sc.ints.items():
            if hi is None:
                if lo is not None and lo >= 0:
                    options.append((f"{name} % {self.size_expr(sc, L)}", 1))
                continue
            if lo > hi:  # a loop that never runs: any use is fine
                options.append((name, 2))
                continue
            if lo >= 0 and hi <= L - 1:
                options.append((name, 8 if name in sc.loop_vars else 3))
                options.append((f"{self.size_expr(sc, L)} - 1 - {name}", 1))
                if neg:
                    options.append((f"-1 - {name}", 0.1))
            if lo >= 0 and hi + 1 <= L - 1:
                options.append((f"{name} + 1", 1.5))
            if lo - 1 >= 0 and hi <= L - 1:
                options.append((f"{name} - 1", 1.5))
            if lo >= 0 and hi // 2 <= L - 1:
                options.append((f"{name} // 2", 0.3))
            if lo >= 0:
                options.append((f"({name} + {rnd.randint(1, 3)}) % {self.size_expr(sc, L)}", 0.7))
        for name, a in sc.arrays.items():
            if a.ints is not None and a.ints[1] <= L - 1 and a.ints[0] >= 0 and not getattr(self, "_in_index", False):
                self._in_index = True
                try:
                    inner = self.index(sc, a.shape[0])
                finally:
                    self._in_index = False
                options.append((f"{name}[{inner}]", 3))
                self.use("index_arrays")
        choice = self.pick(options)
        if choice.startswith("-"):
            self.use("negindex")
        return choice

    def fleaf(self, sc: _Scope, arrays: bool = True) -> str:
        rnd = self.rnd
        floats = sc.floats
        readable = [(nm, a) for nm, a in sc.arrays.items() if a.ints is None] if arrays else []
        options: list[tuple[str, float]] = [("const", 1)]
        if floats:
            options.append(("float", 5))
        if readable:
            options.append(("elem", 5))
        if sc.ints:
            options.append(("int", 0.7))
        if sc.tuples:
            options.append(("tuple", 0.7))
        if "pi" in self.features:
            options.append(("pi", 0.06))
        kind = self.pick(options)
        if kind == "float":
            recent = floats[-4:]
            return rnd.choice(recent if rnd.random() < 0.5 else floats)
        if kind == "elem":
            nm, a = rnd.choice(readable)
            return f"{nm}[{', '.join(self.index(sc, L) for L in a.shape)}]"
        if kind == "int":
            i = rnd.choice(list(sc.ints))
            if "floatcall" in self.features and rnd.random() < 0.4:
                self.use("floatcall")
                return f"float({i})"
            return f"({i} * {self.const()})"
        if kind == "tuple":
            self.use("tuples")
            return f"{rnd.choice(list(sc.tuples))}[{rnd.randint(0, 1)}]"
        if kind == "pi":
            self.use("pi")
            return rnd.choice(["math.pi", "np.pi", "(0.5 * math.pi)"])
        return self.const()

    def fexpr(self, sc: _Scope, depth: int) -> str:
        """A float-valued expression (parenthesized unless a leaf)."""
        rnd = self.rnd
        if depth <= 0 or rnd.random() < 0.25:
            return self.fleaf(sc)
        f = self.features
        top = (not sc.in_loop or "whole_in_loops" in f) and not self.in_helper
        kind = self.pick(
            [
                ("leaf", 2),
                ("neg", 0.7),
                ("bin", 6),
                ("div", 2),
                ("pow", 1.5),
                ("math", 3 if "math" in f else 0),
                ("np", 1.5 if "npmath" in f else 0),
                ("binmath", 1 if "math" in f or "npmath" in f else 0),
                ("absminmax", 1.5 if "absminmax" in f else 0),
                ("float", 0.4 if "floatcall" in f else 0),
                ("ifexp", 0.8 if "ifexp" in f and "compare" in f else 0),
                ("helper", 1 if self.helpers else 0),
                ("reduce", 0.8 if "whole" in f and top and sc.arrays and not sc.in_prange else 0),
                ("inf", 0.1 if "inf" in f and "absminmax" in f else 0),
            ]
        )
        d = depth - 1
        if kind == "leaf":
            return self.fleaf(sc)
        if kind == "neg":
            return f"-{self.fleaf(sc)}" if rnd.random() < 0.5 else f"(-{self.fexpr(sc, d)})"
        if kind == "bin":
            op = rnd.choice(["+", "-", "*", "+", "*"])
            return f"({self.fexpr(sc, d)} {op} {self.fexpr(sc, d)})"
        if kind == "div":
            e = self.fleaf(sc)
            denominators = [f"(1.0 + {e} * {e})", rnd.choice(["2.0", "3.0", "0.5"])]
            if "math" in f:
                denominators.append(f"(2.0 + math.cos({e}))")
            return f"({self.fexpr(sc, d)} / {rnd.choice(denominators)})"
        if kind == "pow":
            e = self.fexpr(sc, d)
            g = self.fleaf(sc)
            powers = [
                f"({e} ** 2)",
                f"({g} ** 3)",
                f"((1.0 + {g} * {g}) ** 0.5)",
                f"((1.0 + {g} * {g}) ** {self.fleaf(sc)})",
                f"(abs({g}) ** 1.5)" if "absminmax" in f else f"({g} ** 2.0)",
                f"({g} ** 2.0)",
            ]
            if "math" in f:
                powers += [f"(2.0 ** math.sin({g}))", f"math.pow(1.5 + math.cos({g}), {self.fleaf(sc)})"]
            return rnd.choice(powers)
        if kind in ("math", "np"):
            self.use("math" if kind == "math" else "npmath")
            name = rnd.choice([k for k in _UNARY if kind == "math" or k not in _NO_NP])
            mod = "math" if kind == "math" else "np"
            fname = name if mod == "math" else _NP_NAMES.get(name, name)
            arg = _UNARY[name].replace("{m}", mod)
            inner = self.fexpr(sc, d) if "{} * {}" not in arg else self.fleaf(sc)
            return f"{mod}.{fname}({arg.format(inner, inner) if arg.count('{}') == 2 else arg.format(inner)})"
        if kind == "binmath":
            mod = "math" if "math" in f and (rnd.random() < 0.6 or "npmath" not in f) else "np"
            self.use("math" if mod == "math" else "npmath")
            a, b = self.fexpr(sc, d), self.fexpr(sc, d)
            g = self.fleaf(sc)
            options = [
                f"{mod}.hypot({a}, {b})",
                f"{mod}.{'atan2' if mod == 'math' else 'arctan2'}({a}, 1.0 + {g} * {g})",
                f"{mod}.copysign({a}, {b})",
            ]
            if mod == "math":
                options.append(f"math.pow(1.0 + {g} * {g}, {b})")
            else:
                options += [f"np.power(1.0 + {g} * {g}, {b})", f"np.maximum({a}, {b})", f"np.minimum({a}, {b})",
                            f"np.square({a})", f"np.abs({a})"]  # fmt: skip
            return rnd.choice(options)
        if kind == "absminmax":
            self.use("absminmax")
            fn = rnd.choice(["abs", "min", "max", "min", "max"])
            if fn == "abs":
                return f"abs({self.fexpr(sc, d)})"
            args = [self.fexpr(sc, d) for _ in range(rnd.choice([2, 2, 3]))]
            return f"{fn}({', '.join(args)})"
        if kind == "float":
            self.use("floatcall")
            return f"float({self.fexpr(sc, d)})"
        if kind == "ifexp":
            self.use("ifexp")
            return f"({self.fexpr(sc, d)} if {self.cond(sc)} else {self.fexpr(sc, d)})"
        if kind == "helper":
            call = self.call_helper(sc, "f")
            return call if call is not None else self.fleaf(sc)
        if kind == "reduce":
            self.use("whole")
            return self.reduction(sc)
        if kind == "inf":
            self.use("inf")
            inf = rnd.choice(["math.inf", "np.inf"])
            return rnd.choice([f"min({inf}, {self.fexpr(sc, d)})", f"max(-{inf}, {self.fexpr(sc, d)})"])
        return self.fleaf(sc)

    def fcond(self, sc: _Scope) -> str:
        """A comparison of floats."""
        self.use("compare")
        rnd = self.rnd
        a = self.fexpr(sc, 1)
        if "inf" in self.features and rnd.random() < 0.04:
            self.use("inf")
            return f"{a} < {rnd.choice(['math.inf', 'np.inf'])}"
        op = rnd.choice(["<", ">", "<=", ">="])
        b = self.fexpr(sc, 1) if rnd.random() < 0.5 else rnd.choice(["0.0", "0.5", "-0.5", "1.0"])
        return f"{a} {op} {b}"

    def cond(self, sc: _Scope) -> str:
        rnd = self.rnd
        ints = list(sc.ints)
        if "compare" not in self.features:
            return f"{self.fexpr(sc, 1)} > 0.0"
        options = [("f", 4), ("i", 2 if ints else 0), ("and", 1), ("or", 1), ("not", 0.5)]
        kind = self.pick(options)
        if kind == "f":
            return self.fcond(sc)
        if kind == "i":
            i = rnd.choice(ints)
            other = [j for j in ints if j != i]
            return rnd.choice(
                [f"{i} % 2 == 0", f"{i} < {rnd.choice(other) if other else 2}", f"{i} == 1", f"{i} != 0", f"{i} >= 2"]
            )
        if kind == "not":
            return f"not ({self.fcond(sc)})"
        join = kind
        return f"({self.fcond(sc)}) {join} ({self.cond(sc) if rnd.random() < 0.2 else self.fcond(sc)})"
