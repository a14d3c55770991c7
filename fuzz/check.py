"""Run one program through sourcead's public API and classify the outcome.

The checks, in order (the first that fails decides the outcome):

1. the transforms are prepared (`sourcead.jvp`, `vjp`, and `grad` for a float result), jit=False;
2. a point where the function is smooth is found: Ridders' extrapolation of central differences
   along a seeded random direction `v` must agree with a plain central difference at a much
   smaller step, else up to `POINTS` new points are drawn; none smooth: `discarded`;
3. jvp's and vjp's value equal the plain function's outputs (result, then the final state of the
   written arguments), rtol 1e-12;
4. `J v` from jvp, `<J^T w, v>` from vjp (seeded random cotangent `w`) and `<grad, v>` against the
   finite differences; the dot-product test `<w, J v> == <J^T w, v>`, rtol 1e-9;
5. no derivative call modified its arguments;
6. for a jit program, the same calls with jit=True give the same results (rtol 1e-10);
7. for a jit program with a float result: each array argument one element shorter, then longer,
   along a seeded axis. Where the generated code, run as Python (jit=False), indexes out of range,
   the compiled gradient must raise too (never return: the shape contract or numba's bounds checks
   must catch it); where the plain function runs, neither may refuse the shapes (the contract's
   facts are exact). The generated code may run where the function fails: it leaves out what the
   derivative does not need, as numba drops a dead read. Values are not compared: a shorter
   argument can leave an `np.empty` element unwritten that the function then reads.

Outcomes: `ok`, `wrong`, `crash` (an exception that is not a SourceADError, or sourcead's
"numba could not compile"), `unpositioned` (a SourceADError without a position that is not about
the call's arguments, or one that misreports: on a `def` line, or naming a variable the user's
code does not have), `jit-mismatch`, `rejected` (a positioned SourceADError), `discarded`, and,
decided by the parent process, `timeout` and `crash` by a signal.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import re
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .generate import Program, finite, outputs
from .misreport import misreported

OUTCOMES = ("ok", "wrong", "crash", "unpositioned", "jit-mismatch", "rejected", "discarded", "timeout")
FAILURES = ("wrong", "crash", "unpositioned", "jit-mismatch", "timeout")

POINTS = 5  # points tried before a program counts as non-smooth
EPS = float(np.finfo(np.float64).eps)
RTOL_VALUE = 1e-12
RTOL_FD = 1e-6
RTOL_DOT = 1e-9
RTOL_JIT = 1e-10
RTOL_CHECKPOINT = 1e-12  # checkpointed loops replay the same operations: the same gradient
H_RIDDERS = 1e-3  # Ridders' first step, relative to the arguments' scale
H_CHECK = 1e-5  # the plain central difference that must agree with it
SMOOTH_RTOL = 1e-5

# sourcead's errors about the call (the arguments, tangents, cotangents), not the code
_BAD_CALL = re.compile(
    r"takes \d+ arguments|must be a NumPy array|cannot differentiate with respect to|is used as (a bool|an integer|"
    r"a scalar)|^out= |cotangent= must be|tangents= must be|^the tangent of|cotangent must be a float|"
    r"so its outputs are|share memory"
)


@dataclass
class Line:
    """One comparison: what the derivative code gave against what it should be."""

    what: str
    got: Any
    expected: Any
    error: float  # |got - expected|, relative to the scale
    allowed: float
    ok: bool

    def render(self) -> str:
        verdict = "PASS" if self.ok else "FAIL"
        return (
            f"  {self.what:<34} {_show(self.got):>24} {_show(self.expected):>24} "
            f"{self.error:9.1e} {self.allowed:9.1e}  {verdict}"
        )


@dataclass
class Outcome:
    outcome: str
    detail: str = ""  # the failing check, the exception's first line, the rejection message
    lines: list[Line] = field(default_factory=list)
    point: int = 0
    args: tuple | None = None  # the arguments at that point
    seconds: float = 0.0
    trace: str = ""  # the traceback of a crash
    stage: str = ""  # the call that failed

    @property
    def signature(self) -> str:
        """A short key that groups outcomes of one cause (numbers and paths taken out)."""
        return f"{self.outcome}: {normalize(self.detail)}"

    def report(self) -> str:
        head = f"outcome: {self.outcome}" + (f" ({self.stage})" if self.stage else "")
        parts = [head, f"detail: {self.detail}"] if self.detail else [head]
        if self.lines:
            parts.append(f"  {'check':<34} {'got':>24} {'expected':>24} {'rel.err':>9} {'allowed':>9}")
            parts += [line.render() for line in self.lines]
        if self.trace:
            parts.append(self.trace.rstrip())
        return "\n".join(parts)


def normalize(text: str) -> str:
    text = re.sub(r"(/[\w.+-]+)+\.py", "FILE", text)
    text = re.sub(r"sourcead_\w+_[0-9a-f]+", "MODULE", text)
    text = re.sub(r"\$\d+", "$", text)  # numba's temporaries ($568call.33)
    text = re.sub(r"\b\d+(\.\d+)?(e[-+]?\d+)?\b", "N", text)
    text = re.sub(r"`[^`]*`", "`_`", text)
    return text[:160]


def _show(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.15e}"
    return str(value)


class _Stop(Exception):
    def __init__(self, outcome: Outcome):
        self.outcome = outcome


def classify(exc: BaseException, stage: str, program_file: str | None = None) -> Outcome:
    """The outcome of an exception raised by a sourcead call."""
    from sourcead import AliasingError, SourceADError

    first = (str(exc).splitlines() or [""])[0]
    trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-6:])
    if isinstance(exc, SourceADError):
        message = exc.message.splitlines()[0] if exc.message else first
        if message.startswith(("numba could not compile", "numba's run-time check failed")):
            return Outcome("crash", message, stage=stage, trace=trace)
        if exc.where is None:
            if isinstance(exc, AliasingError) or _BAD_CALL.search(message):
                return Outcome("wrong", f"the call's structure disagrees with the function: {message}", stage=stage)
            return Outcome("unpositioned", message, stage=stage, trace=trace)
        if program_file is not None and Path(exc.where.filename).resolve() != Path(program_file).resolve():
            return Outcome("unpositioned", f"positioned outside the user's file ({exc.where.filename}): {message}",
                           stage=stage, trace=trace)  # fmt: skip
        if message.startswith("grad needs a function that returns a float"):
            return Outcome("wrong", f"grad refuses a function that returns a float: {message}", stage=stage)
        misreport = misreported(exc, message, program_file)
        if misreport:
            return Outcome("unpositioned", f"{misreport}: {message}", stage=stage, trace=trace)
        return Outcome("rejected", message, stage=stage)
    return Outcome("crash", f"{type(exc).__name__}: {first}", stage=stage, trace=trace)


# --- structure of results -----------------------------------------------------------------------


class _StructureError(Exception):
    pass


def _leaf(value: Any, like: Any, what: str) -> np.ndarray:
    if isinstance(like, np.ndarray):
        if not isinstance(value, np.ndarray) or value.shape != like.shape:
            got = f"array of shape {value.shape}" if isinstance(value, np.ndarray) else type(value).__name__
            raise _StructureError(f"{what}: expected an array of shape {like.shape}, got {got}")
        return np.asarray(value, dtype=np.float64).ravel()
    if isinstance(value, np.ndarray) or not isinstance(value, (float, int, np.floating, np.integer)):
        raise _StructureError(f"{what}: expected a float, got {type(value).__name__}")
    return np.array([float(value)])


def flatten_outputs(value: Any, program: Program, f0: list[Any], what: str) -> np.ndarray:
    """jvp's value or tangent (result, then written arguments) as one vector, shaped like f0."""
    if program.written:
        if not isinstance(value, tuple) or len(value) != 1 + len(program.written):
            raise _StructureError(f"{what}: expected (result, {', '.join(program.written)})")
        result, written = value[0], list(value[1:])
    else:
        result, written = value, []
    if program.result == "tuple":
        if not isinstance(result, tuple) or len(result) != 2:
            raise _StructureError(f"{what}: expected a tuple of 2 floats")
        leaves = list(result)
    else:
        leaves = [result]
    leaves += written
    return np.concatenate([_leaf(v, like, what) for v, like in zip(leaves, f0, strict=True)])


def flatten_grads(value: Any, program: Program, args: tuple, what: str) -> list[np.ndarray]:
    positions = [program.params.index(w) for w in program.wrt]
    items = value if isinstance(program.wrt_api, tuple) else (value,)
    if not isinstance(items, tuple) or len(items) != len(positions):
        raise _StructureError(f"{what}: expected {len(positions)} derivatives")
    return [_leaf(g, args[k], f"{what} [{program.params[k]}]") for g, k in zip(items, positions, strict=True)]


def _flat(values: list[Any]) -> np.ndarray:
    return np.concatenate([np.ravel(np.asarray(v, dtype=np.float64)) for v in values])


def _norm(x: Any) -> float:
    return float(np.linalg.norm(np.ravel(x))) if np.size(x) else 0.0


# --- finite differences -------------------------------------------------------------------------


@dataclass
class Difference:
    estimate: np.ndarray
    error: float
    noise: float  # rounding of f, seen through the smallest step
    smooth: bool
    note: str = ""


def directional(func, program: Program, args: tuple, v: list[Any]) -> Difference:
    """d/dt outputs(args + t v) at 0: Ridders' extrapolation, checked against a central difference
    at a step 100 times smaller; they disagree (a kink, a jump or a branch switch): not smooth."""
    positions = [program.params.index(w) for w in program.wrt]
    scale = max([1.0] + [float(np.max(np.abs(args[k]))) for k in positions])
    vmax = max([1e-300] + [float(np.max(np.abs(d))) for d in v])

    def at(t: float) -> np.ndarray:
        moved = list(args)
        for k, d in zip(positions, v, strict=True):
            moved[k] = args[k] + t * d
        leaves = outputs(func, program, tuple(moved))
        if not finite(leaves):
            raise FloatingPointError("not finite")
        return _flat(leaves)

    def central(h: float) -> np.ndarray:
        return (at(h) - at(-h)) / (2.0 * h)

    f0 = at(0.0)
    fscale = _norm(f0) + 1.0
    h = H_RIDDERS * scale / vmax
    con, con2, safe = 1.4, 1.96, 2.0
    table: list[list[np.ndarray]] = [[central(h)]]
    best, err = table[0][0], math.inf
    for i in range(1, 10):
        h /= con
        row = [central(h)]
        fac = con2
        for j in range(1, i + 1):
            row.append((row[j - 1] * fac - table[i - 1][j - 1]) / (fac - 1.0))
            fac *= con2
            errt = max(_norm(row[j] - row[j - 1]), _norm(row[j] - table[i - 1][j - 1]))
            if errt <= err:
                err, best = errt, row[j]
        table.append(row)
        if _norm(row[i] - table[i - 1][i - 1]) >= safe * err:
            break
    h_check = H_CHECK * scale / vmax
    up, down = at(h_check), at(-h_check)
    check = (up - down) / (2.0 * h_check)
    noise = 64.0 * EPS * fscale / h_check
    size = max(_norm(best), _norm(check))
    smooth = _norm(best - check) <= SMOOTH_RTOL * size + 10.0 * noise and err <= 1e-6 * size + noise
    # one-sided differences: a kink exactly at the point (|t v| at 0) is invisible to central ones
    forward, backward = (up - f0) / h_check, (f0 - down) / h_check
    smooth = smooth and _norm(forward - backward) <= 1e-3 * (size + fscale) + 10.0 * noise
    note = (
        ""
        if smooth
        else (
            f"finite differences do not settle (Ridders {_norm(best):.6e} +- {err:.1e}; step {h_check:.1e}: "
            f"{_norm(check):.6e})"
        )
    )
    return Difference(best, err, noise, smooth, note)


# --- the check ----------------------------------------------------------------------------------


def _random_like(rng: np.random.Generator, value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return rng.standard_normal(value.shape)
    return float(rng.standard_normal())


def _snapshot(args: tuple) -> list[Any]:
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _unchanged(before: list[Any], args: tuple) -> str | None:
    for k, (b, a) in enumerate(zip(before, args, strict=True)):
        if isinstance(b, np.ndarray):
            if not (a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)):
                return f"argument {k} was modified"
    return None


def _compare(what: str, got: float | np.ndarray, expected: float | np.ndarray, scale: float, rtol: float,
             slack: float = 0.0) -> Line:  # fmt: skip
    diff = _norm(np.asarray(got, dtype=np.float64) - np.asarray(expected, dtype=np.float64))
    allowed = rtol * scale + slack
    denominator = max(scale, slack, 1e-300)
    ok = bool(diff <= allowed)  # nan fails
    return Line(what, _plain(got), _plain(expected), diff / denominator, allowed / denominator, ok)


def _plain(x: Any) -> Any:
    """A float, or a list of floats (an array) for the report."""
    array = np.asarray(x, dtype=np.float64)
    return float(array.ravel()[0]) if array.size == 1 else array.ravel().tolist()


class Runner:
    """Runs the checks of one program against its function object."""

    def __init__(self, program: Program, func, program_file: str | None = None):
        self.program = program
        self.func = func
        self.file = program_file
        self.lines: list[Line] = []

    def call(self, stage: str, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except _Stop:
            raise
        except Exception as exc:
            outcome = classify(exc, stage, self.file)
            raise _Stop(outcome) from None

    def fail(self, outcome: str, detail: str, stage: str = "") -> None:
        raise _Stop(Outcome(outcome, detail, lines=list(self.lines), stage=stage))

    def add(self, line: Line, outcome: str = "wrong") -> None:
        self.lines.append(line)
        if not line.ok:
            self.fail(outcome, line.what)

    def run(self) -> Outcome:
        start = time.perf_counter()
        self.point, self.args = 0, None
        try:
            self._run()
            outcome = Outcome("ok", lines=list(self.lines))
        except _Stop as stop:
            outcome = stop.outcome
        outcome.seconds = time.perf_counter() - start
        outcome.point = self.point
        outcome.args = self.args
        if not outcome.lines:
            outcome.lines = list(self.lines)
        return outcome

    def prepare(self, jit: bool) -> tuple:
        import sourcead

        p = self.program
        tag = "jit" if jit else "no-jit"
        jf = self.call(f"sourcead.jvp ({tag})", sourcead.jvp, self.func, p.wrt_api, jit=jit)
        vf = self.call(f"sourcead.vjp ({tag})", sourcead.vjp, self.func, p.wrt_api, jit=jit)
        gf = None
        if p.result == "float":
            gf = self.call(f"sourcead.grad ({tag})", sourcead.grad, self.func, p.wrt_api, jit=jit)
        return jf, vf, gf

    def derivatives(self, prepared: tuple, args: tuple, v: list[Any], w: Any, tag: str) -> dict[str, Any]:
        """Every derivative call at `args`; each must leave its arguments alone."""
        p = self.program
        jf, vf, gf = prepared
        tangents = v[0] if not isinstance(p.wrt_api, tuple) else tuple(v)
        results: dict[str, Any] = {}
        for name, fn, kwargs in (
            ("jvp", jf, {"tangents": _copy(tangents)}),
            ("vjp", vf, {"cotangent": _copy(w)}),
            ("grad", gf, {}),
        ):
            if fn is None:
                continue
            before = _snapshot(args)
            results[name] = self.call(f"{name} call ({tag})", fn, *args, **kwargs)
            changed = _unchanged(before, args)
            if changed:
                self.fail("wrong", f"{name} ({tag}) modified its arguments: {changed}", f"{name} call ({tag})")
        return results

    def find_point(self) -> tuple[tuple, list[Any], Any, list[Any], Difference]:
        p = self.program
        positions = [p.params.index(x) for x in p.wrt]
        note = ""
        for point in range(POINTS):
            args = p.args(point)
            try:
                f0 = outputs(self.func, p, args)
                if not finite(f0):
                    continue
                rng = np.random.default_rng([p.seed, p.index, p.attempt, point, 11])
                v = [_random_like(rng, args[k]) for k in positions]
                w = [_random_like(rng, leaf) for leaf in f0]
                fd = directional(self.func, p, args, v)
            except Exception as exc:
                note = f"the function fails next to point {point}: {type(exc).__name__}: {exc}"
                continue
            if fd.smooth:
                self.point, self.args = point, args
                return args, v, w, f0, fd
            note = fd.note
        self.fail("discarded", f"non-smooth at {POINTS} points: {note}")
        raise AssertionError  # unreachable

    def cotangent(self, w: list[Any]) -> Any:
        p = self.program
        k = 2 if p.result == "tuple" else 1
        result = tuple(w[:2]) if p.result == "tuple" else w[0]
        return (result, *w[k:]) if p.written else result

    def _run(self) -> None:
        p = self.program
        prepared = self.unjitted = self.prepare(jit=False)
        args, v, w_leaves, f0, fd = self.find_point()
        w = self.cotangent(w_leaves)
        got = self.derivatives(prepared, args, v, w, "no-jit")
        try:
            value_j, jv = _pair(got["jvp"], "jvp")
            value_v, jtw = _pair(got["vjp"], "vjp")
            flat_f0 = _flat(f0)
            flat_value_j = flatten_outputs(value_j, p, f0, "jvp value")
            flat_value_v = flatten_outputs(value_v, p, f0, "vjp value")
            flat_jv = flatten_outputs(jv, p, f0, "jvp tangent")
            grads_v = flatten_grads(jtw, p, args, "vjp")
            grads_g = flatten_grads(got["grad"], p, args, "grad") if "grad" in got else None
        except _StructureError as exc:
            self.fail("wrong", f"result structure: {exc}")
        fscale = max(_norm(flat_f0), _norm(flat_value_j))
        self.add(_compare("value: jvp vs f", flat_value_j, flat_f0, fscale, RTOL_VALUE, 1e-300))
        self.add(_compare("value: vjp vs f", flat_value_v, flat_f0, fscale, RTOL_VALUE, 1e-300))
        flat_v = _flat(v)
        flat_w = _flat(w_leaves)
        slack = 10.0 * fd.error + 10.0 * fd.noise
        scale = max(_norm(flat_jv), _norm(fd.estimate))
        self.add(_compare("jvp vs finite differences", flat_jv, fd.estimate, scale, RTOL_FD, slack))
        jtw_v = float(np.dot(_flat(grads_v), flat_v))
        w_fd = float(np.dot(flat_w, fd.estimate))
        scale = max(_norm(_flat(grads_v)) * _norm(flat_v), _norm(flat_w) * _norm(fd.estimate))
        self.add(_compare("vjp vs finite differences", jtw_v, w_fd, scale, RTOL_FD, _norm(flat_w) * slack))
        if grads_g is not None:
            g_v = float(np.dot(_flat(grads_g), flat_v))
            scale = max(_norm(_flat(grads_g)) * _norm(flat_v), abs(float(fd.estimate[0])))
            self.add(_compare("grad vs finite differences", g_v, float(fd.estimate[0]), scale, RTOL_FD, slack))
        w_jv = float(np.dot(flat_w, flat_jv))
        scale = max(_norm(flat_w) * _norm(flat_jv), _norm(_flat(grads_v)) * _norm(flat_v))
        # rounding of derivatives that cancel to almost nothing: a floor of eps-sized errors of the
        # directions' sizes (a derivative of 1e-12 computed from terms of size 1 is exact to 1e-16)
        floor = 1e3 * np.finfo(np.float64).eps * _norm(flat_w) * _norm(flat_v)
        self.add(_compare("dot product <w,Jv> vs <J'w,v>", w_jv, jtw_v, scale, RTOL_DOT, max(floor, 1e-300)))
        self.check_checkpointed(args, w, f0, flat_value_v, _flat(grads_v))
        if not p.jit:
            return
        reference = {"jvp value": flat_value_j, "jvp tangent": flat_jv, "vjp value": flat_value_v,
                     "vjp gradient": _flat(grads_v)}  # fmt: skip
        if grads_g is not None:
            reference["grad"] = _flat(grads_g)
        prepared = self.prepare(jit=True)
        got = self.derivatives(prepared, args, v, w, "jit")
        try:
            value_j, jv = _pair(got["jvp"], "jvp")
            value_v, jtw = _pair(got["vjp"], "vjp")
            jitted = {"jvp value": flatten_outputs(value_j, p, f0, "jvp value (jit)"),
                      "jvp tangent": flatten_outputs(jv, p, f0, "jvp tangent (jit)"),
                      "vjp value": flatten_outputs(value_v, p, f0, "vjp value (jit)"),
                      "vjp gradient": _flat(flatten_grads(jtw, p, args, "vjp (jit)"))}  # fmt: skip
            if grads_g is not None:
                jitted["grad"] = _flat(flatten_grads(got["grad"], p, args, "grad (jit)"))
        except _StructureError as exc:
            self.fail("jit-mismatch", f"result structure: {exc}")
        for name, ref in reference.items():
            scale = max(_norm(ref), _norm(jitted[name]))
            self.add(_compare(f"jit vs no-jit: {name}", jitted[name], ref, scale, RTOL_JIT, 1e-300), "jit-mismatch")
        if prepared[2] is not None and not p.written:
            self.check_shapes(self.unjitted[2], prepared[2], args)

    def check_shapes(self, python, compiled, args: tuple) -> None:
        """Each array argument one element shorter and one longer along a seeded axis (step 7)."""
        p = self.program
        rng = np.random.default_rng([p.seed, p.index, p.attempt, 7])
        for k, arg in enumerate(args):
            if not isinstance(arg, np.ndarray) or arg.ndim == 0:
                continue
            axis = int(rng.integers(arg.ndim))
            for change in (-1, 1):
                if arg.shape[axis] + change < 1:
                    continue
                shape = list(arg.shape)
                shape[axis] += change
                other = np.resize(arg, shape) if change > 0 else np.take(arg, range(shape[axis]), axis=axis).copy()
                trial = (*args[:k], other, *args[k + 1 :])
                self.compare_shapes(python, compiled, trial, f"argument {p.params[k]} with shape {tuple(shape)}")

    def compare_shapes(self, python, compiled, trial: tuple, what: str) -> None:
        from sourcead import SourceADError
        from sourcead.errors import ShapeError

        try:
            outputs(self.func, self.program, trial)
            plain_runs = True
        except IndexError:
            plain_runs = False
        except Exception:
            return  # the function fails otherwise: nothing to compare
        got = {}
        for tag, grad in (("no-jit", python), ("jit", compiled)):
            stage = f"grad call ({tag}, shapes)"
            try:
                got[tag] = grad(*tuple(_copy(a) for a in trial))
            except ShapeError as exc:
                if plain_runs:
                    self.fail("wrong", f"{tag}: shapes refused where the function runs, {what}: {exc.message}", stage)
                got[tag] = exc
            except SourceADError:
                return  # another refusal (a positioned error of the function's own): not about shapes
            except Exception as exc:
                self.fail("crash", f"{tag}, {what}: {type(exc).__name__}: {exc}", stage)
        if isinstance(got["no-jit"], ShapeError) and not isinstance(got["jit"], ShapeError):
            self.fail("wrong", f"the compiled gradient ran where the generated code indexes out of range, {what}: "
                      f"{got['no-jit'].message}", "grad call (jit, shapes)")  # fmt: skip
        if isinstance(got["jit"], ShapeError) != isinstance(got["no-jit"], ShapeError):
            self.fail("jit-mismatch", f"the compiled gradient refused shapes the generated code runs, {what}: "
                      f"{got['jit']}", "grad call (jit, shapes)")  # fmt: skip

    def check_checkpointed(self, args: tuple, w: Any, f0: Any, value: np.ndarray, grads: np.ndarray) -> None:
        """Every loop marked `# sourcead: checkpoint` (nested ones too): where any is checkpointed,
        its snapshots and replays must give the value and the gradient of the unmarked program."""
        import sourcead

        p = self.program
        if self.file is None or not _MARKABLE.search(p.source):
            return
        name = f"{Path(self.file).stem}_marked"
        path = Path(self.file).with_name(f"{name}.py")
        path.write_text(marked_loops(p.source), encoding="utf-8")
        try:
            func = getattr(import_file(path, name), p.name)
            vf = self.call("sourcead.vjp (checkpointed)", sourcead.vjp, func, p.wrt_api, jit=False)
            got = self.call("vjp call (checkpointed)", vf, *args, cotangent=_copy(w))
            if "checkpoint_next(" not in vf._variant(args).compiled.source:
                return  # no loop records anything, or none could be checkpointed (the code says why)
        finally:
            sys.modules.pop(name, None)
        try:
            value_c, jtw_c = _pair(got, "vjp (checkpointed)")
            flat_value = flatten_outputs(value_c, p, f0, "vjp value (checkpointed)")
            flat_grads = _flat(flatten_grads(jtw_c, p, args, "vjp (checkpointed)"))
        except _StructureError as exc:
            self.fail("wrong", f"result structure (checkpointed): {exc}")
        scale = max(_norm(value), _norm(flat_value))
        self.add(_compare("checkpointed vs recorded: value", flat_value, value, scale, RTOL_CHECKPOINT, 1e-300))
        scale = max(_norm(grads), _norm(flat_grads))
        self.add(_compare("checkpointed vs recorded: gradient", flat_grads, grads, scale, RTOL_CHECKPOINT, 1e-300))


_MARKABLE = re.compile(r"^\s*(for|while)\b", re.MULTILINE)


def marked_loops(source: str) -> str:
    """The program with `# sourcead: checkpoint` above every `for` and `while` line."""
    lines = []
    for line in source.splitlines():
        if _MARKABLE.match(line):
            lines.append(line[: len(line) - len(line.lstrip())] + "# sourcead: checkpoint")
        lines.append(line)
    return "\n".join(lines) + "\n"


def _pair(value: Any, what: str) -> tuple[Any, Any]:
    if not isinstance(value, tuple) or len(value) != 2:
        raise _StructureError(f"{what}: expected (value, derivative)")
    return value[0], value[1]


def _copy(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_copy(v) for v in value)
    return value.copy() if isinstance(value, np.ndarray) else value


# --- entry points ---------------------------------------------------------------------------------

_COUNTER = itertools.count()


def import_file(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def check_program(program: Program, folder: Path) -> Outcome:
    """Write the program into `folder` as a module, import it, and run every check."""
    name = f"fuzz_{program.seed}_{program.index}_{program.attempt}_{next(_COUNTER)}"
    path = folder / f"{name}.py"
    path.write_text(program.source, encoding="utf-8")
    try:
        module = import_file(path, name)
        func = getattr(module, program.name)
        return Runner(program, func, str(path)).run()
    finally:
        sys.modules.pop(name, None)


# --- worker processes -----------------------------------------------------------------------------


def worker_main(conn, folder: str, features: frozenset[str]) -> None:
    """A worker process (spawned): private caches, then check programs until told to stop.

    Tasks: ("gen", seed, index, jit): generate program (seed, index) and check it;
    ("program", Program): check a given program (the shrinker's candidates), after a plain run.
    Each answer is (Program | None, Outcome)."""
    import os

    root = Path(folder)
    os.environ["SOURCEAD_CACHE_DIR"] = str(root / "sourcead-cache")
    os.environ["NUMBA_CACHE_DIR"] = str(root / "numba-cache")
    programs = root / "programs"
    programs.mkdir(parents=True, exist_ok=True)
    import warnings

    warnings.simplefilter("ignore")  # numba's performance warnings
    import sourcead  # noqa: F401  (import cost paid once, before the first timed task)

    from .generate import generate, runs_finite

    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        start = time.perf_counter()
        if task[0] == "gen":
            _, seed, index, jit = task
            program = generate(seed, index, features, jit)
            if program is None:
                outcome = Outcome("discarded", "no valid program in the attempts")
            else:
                outcome = _guarded(program, programs)
        else:
            program = task[1]
            if runs_finite(program):
                outcome = _guarded(program, programs)
            else:
                outcome = Outcome("discarded", "does not run as plain Python with a finite value")
        outcome.seconds = time.perf_counter() - start
        conn.send((program, outcome))


def _guarded(program: Program, folder: Path) -> Outcome:
    try:
        return check_program(program, folder)
    except Exception as exc:  # a failure of the checker itself: report it, never lose the program
        return Outcome("crash", f"fuzz checker error: {type(exc).__name__}: {exc}", trace=traceback.format_exc())


# --- reproducers ------------------------------------------------------------------------------------

PROGRAM_MARK = "# ---- fuzz: the program (sourcead reads it from this file) ----"
CHECK_MARK = "# ---- fuzz: how it is checked ----"
REPO = str(Path(__file__).resolve().parent.parent)


def literal(value: Any) -> str:
    """Python source for an argument value (floats round-trip exactly through repr)."""
    if isinstance(value, np.ndarray):
        if value.dtype == np.int64:
            return f"np.array({value.tolist()!r}, dtype=np.int64)"
        return f"np.array({value.tolist()!r})"
    if isinstance(value, tuple):
        return "(" + "".join(literal(v) + ", " for v in value) + ")"
    return repr(value)


def meta(program: Program) -> dict[str, Any]:
    return {
        "seed": program.seed,
        "index": program.index,
        "attempt": program.attempt,
        "name": program.name,
        "argspecs": [(a.name, a.kind, a.shape, a.value) for a in program.argspecs],
        "wrt": program.wrt,
        "wrt_api": program.wrt_api,
        "written": program.written,
        "result": program.result,
        "jit": program.jit,
        "used": program.used,
    }


def program_from(meta: dict[str, Any], source: str, args: tuple) -> Program:
    from .generate import ArgSpec

    return Program(
        seed=meta["seed"],
        index=meta["index"],
        attempt=meta["attempt"],
        source=source,
        name=meta["name"],
        argspecs=tuple(ArgSpec(n, k, tuple(s), v) for n, k, s, v in meta["argspecs"]),
        wrt=tuple(meta["wrt"]),
        wrt_api=meta["wrt_api"],
        written=tuple(meta["written"]),
        result=meta["result"],
        jit=meta["jit"],
        used=tuple(meta.get("used", ())),
        fixed_args=args,
    )


def reproducer(program: Program, outcome: Outcome, path: Path) -> str:
    """The text of a self-contained reproducer: the program's source, its arguments at the point
    where it failed, wrt, and a __main__ that re-runs the check and prints expected vs got."""
    args = outcome.args if outcome.args is not None else program.args(0)
    report = outcome.report().replace("\\", "\\\\").replace('"""', "'''")
    head = (
        f'"""sourcead fuzz reproducer: {outcome.outcome} in program {program.seed}:{program.index} '
        f"(jit={program.jit})\n\n{report}\n\n"
        f"Re-run:  python {path}   or   python -m fuzz --replay {path}\n"
        f"Shrink:  python -m fuzz --shrink {path}\n"
        f"wrt={program.wrt_api!r}; the arguments are ARGS below; features: {', '.join(program.used)}\n"
        '"""\n\n'
    )
    source = program.source.rstrip("\n")
    check = (
        f"ARGS = {literal(tuple(args))}\n"
        f"WRT = {program.wrt_api!r}\n"
        f"META = {meta(program)!r}\n"
        f"EXPECTED = {outcome.outcome!r}  # {outcome.detail[:100]!r}\n\n"
        'if __name__ == "__main__":\n'
        "    import sys\n\n"
        f"    sys.path.insert(0, {REPO!r})  # the checkout that holds the fuzz package\n"
        "    from fuzz.check import replay\n\n"
        "    sys.exit(replay(globals()))\n"
    )
    return f"{head}{PROGRAM_MARK}\n{source}\n\n\n{CHECK_MARK}\n{check}"


def split_reproducer(text: str) -> tuple[str, str]:
    """(program source, check part) of a reproducer's text."""
    start = text.index(PROGRAM_MARK) + len(PROGRAM_MARK) + 1
    end = text.index(CHECK_MARK)
    return text[start:end].rstrip("\n") + "\n", text[end:]


def load_reproducer(path: Path) -> tuple[Program, str]:
    """The program of a reproducer file (its arguments fixed), and the outcome it recorded."""
    text = path.read_text(encoding="utf-8")
    source, check = split_reproducer(text)
    namespace: dict[str, Any] = {"np": np}
    exec(check.split('if __name__ == "__main__":')[0], namespace)
    return program_from(namespace["META"], source, namespace["ARGS"]), namespace["EXPECTED"]


def replay(namespace: dict[str, Any], file: str | None = None) -> int:
    """Re-run the check of a reproducer whose functions are in `namespace`; print the report.
    Exit status 1 when it fails (wrong, crash, unpositioned, jit-mismatch), else 0."""
    import os
    import tempfile
    import warnings

    warnings.simplefilter("ignore")
    os.environ.setdefault("SOURCEAD_CACHE_DIR", tempfile.mkdtemp(prefix="fuzz-replay-"))
    file = file or namespace.get("__file__")
    text = Path(file).read_text(encoding="utf-8")  # type: ignore[arg-type]
    source, _ = split_reproducer(text)
    program = program_from(namespace["META"], source, namespace["ARGS"])
    func = namespace[program.name]
    outcome = Runner(program, func, file).run()
    print(f"program {program.seed}:{program.index}, wrt={program.wrt_api!r}, jit={program.jit}")
    print(outcome.report())
    expected = namespace.get("EXPECTED")
    same = "reproduced" if outcome.outcome == expected else f"recorded {expected}, now {outcome.outcome}"
    print(f"{same} ({outcome.seconds:.2f} s)")
    return 1 if outcome.outcome in FAILURES else 0
