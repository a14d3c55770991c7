"""A fixed-seed slice of the differential fuzzer (`python -m fuzz`), and checks of the generator.

The slice must find no wrong derivative, no crash, no unpositioned error and no jit/no-jit
disagreement (`make fuzz` runs 5,000 programs the same way); the generator's own tests must pass.
"""

from __future__ import annotations

import ast
import inspect
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # fuzz/ is a dev tool beside the package, not installed

from fuzz.__main__ import fuzz  # noqa: E402
from fuzz.check import FAILURES, classify, load_reproducer, reproducer  # noqa: E402
from fuzz.generate import (  # noqa: E402
    DEFAULT_FEATURES,
    FEATURES,
    generate,
    load_source,
    outputs,
    resolve_features,
    runs_finite,
    wants_jit,
)

SEED = 0
SLICE = 100  # programs checked with jit=False (`make fuzz` checks 5000; this is the suite's share)
JIT_SHARE = 0.05  # of which these also run with jit=True (2 for seed 0: programs 58 and 93)


def test_fuzz_slice_finds_no_bug(tmp_path: Path) -> None:
    summary = fuzz(SLICE, SEED, JIT_SHARE, 2, DEFAULT_FEATURES, tmp_path, timeout=60.0, progress=False)
    assert summary.jit_programs >= 1
    failures = {k: summary.counts[k] for k in FAILURES if summary.counts[k]}
    assert not failures, f"{failures}; reproducers: {[p.name for p in summary.files]}"


def test_jit_share_of_the_slice() -> None:
    assert sum(wants_jit(SEED, i, JIT_SHARE) for i in range(SLICE)) == 2


def test_generator_is_deterministic_and_its_programs_run() -> None:
    for index in range(120):
        program = generate(SEED, index)
        assert program is not None
        again = generate(SEED, index)
        assert again is not None and again.source == program.source and again.wrt_api == program.wrt_api
        for a, b in zip(program.args(0), again.args(0), strict=True):
            np.testing.assert_array_equal(a, b)
        ast.parse(program.source)  # valid Python
        compile(program.source, f"<program {index}>", "exec")
        assert runs_finite(program)
        func = load_source(program.source, program.name)
        args = program.args(0)
        before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        leaves = outputs(func, program, args)
        assert all(np.all(np.isfinite(leaf)) for leaf in leaves)
        for a, b in zip(args, before, strict=True):  # outputs() runs the function on copies
            np.testing.assert_array_equal(a, b)
        if program.result == "float":
            assert isinstance(leaves[0], float | int) and not isinstance(leaves[0], bool)
        assert set(program.wrt) <= {a.name for a in program.argspecs if a.kind in ("float", "array")}
        assert program.source.count("\n") <= 60


def test_programs_do_not_depend_on_other_programs_or_the_jit_share() -> None:
    alone = generate(SEED, 57)
    for index in range(50):
        generate(SEED, index)
    assert alone is not None and generate(SEED, 57).source == alone.source  # type: ignore[union-attr]
    jitted = generate(SEED, 57, jit=True)
    assert jitted is not None and jitted.source == alone.source and jitted.jit


def test_features_switch_constructs_off() -> None:
    assert resolve_features("") == DEFAULT_FEATURES
    assert resolve_features("all") == frozenset(FEATURES)
    assert resolve_features("-prange,+array3d") == (DEFAULT_FEATURES - {"prange"}) | {"array3d"}
    with pytest.raises(ValueError):
        resolve_features("+nonsense")
    plain = resolve_features("none,arrays,for")
    for index in range(40):
        program = generate(SEED, index, plain)
        assert program is not None
        assert set(program.used) <= plain, (set(program.used) - plain, program.source)
        for word in ("while", "if ", "math.", "np.", "prange", "min(", "max("):
            assert word not in program.source.split("def f(")[1], (word, program.source)


def test_outcomes_of_exceptions() -> None:
    from sourcead import SourceADError
    from sourcead.errors import Location

    here = Location(__file__, 1, 0, "x")
    assert classify(SourceADError("no", here), "s", __file__).outcome == "rejected"
    assert classify(SourceADError("no"), "s", __file__).outcome == "unpositioned"
    assert classify(SourceADError("numba could not compile the generated code x.py: y"), "s").outcome == "crash"
    assert classify(SourceADError("argument `x` of f must be a NumPy array, got float"), "s").outcome == "wrong"
    assert classify(IndexError("tuple index out of range"), "s").outcome == "crash"


def test_rejections_that_misreport_are_failures(tmp_path: Path) -> None:
    """Issue 38, findings 6 and 7: a rejection on the `def` line, or naming a variable the user
    never wrote, is counted with the unpositioned errors, not as a rejection."""
    from sourcead import SourceADError
    from sourcead.errors import Location

    path = tmp_path / "prog.py"
    path.write_text("def f(B, x):\n    y = h(x)\n    y[0] = 0.0\n    return y[1]\n", encoding="utf-8")

    def outcome(message: str, line: int) -> str:
        return classify(SourceADError(message, Location(str(path), line, 4, "")), "s", str(path)).outcome

    assert outcome("`y` is a view of `B`, and one of them is then written", 1) == "unpositioned"
    assert outcome("`y = result0_1` makes two names for one array", 2) == "unpositioned"
    assert outcome("`y = h(x)` makes two names for one array (write `.copy()`)", 2) == "rejected"
    assert outcome("`abs()` of an array", 3) == "rejected"  # a builtin is nobody's compiler-made name


def test_reproducer_round_trip(tmp_path: Path) -> None:
    from fuzz.check import Outcome

    program = generate(SEED, 3)
    assert program is not None
    path = tmp_path / "wrong-0-3.py"
    path.write_text(reproducer(program, Outcome("wrong", "jvp vs finite differences"), path), encoding="utf-8")
    again, expected = load_reproducer(path)
    assert expected == "wrong" and again.wrt_api == program.wrt_api and again.written == program.written
    for a, b in zip(again.args(0), program.args(0), strict=True):
        np.testing.assert_array_equal(a, b)
    compile(path.read_text(encoding="utf-8"), str(path), "exec")


@pytest.mark.parametrize("jit", [False, True], ids=["nojit", "jit"])
def test_a_dead_value_that_overflows_leaves_the_gradient_finite(jit):
    """findings.dead_overflow (a finding of the fuzzer): the loop's last p overflows to inf and
    reaches no result; the gradient of sum(a1 * y[:3]) is y[:3], not nan. (Not a zoo entry: its
    finite differences overflow too.)"""
    import findings

    import sourcead

    a1, y = np.array([1.3, 1.4, 1.45]), np.array([0.5, -1.0, 2.0, 0.25, 3.0])
    with np.errstate(all="ignore"):
        g = sourcead.grad(findings.dead_overflow, wrt="a1", jit=jit)(a1, y)
        _, (ga,) = sourcead.vjp(findings.dead_overflow, wrt=("a1",), jit=jit)(a1, y, cotangent=(1.0, np.ones(3)))
    np.testing.assert_array_equal(g, y[:3])
    np.testing.assert_array_equal(ga, y[:3] + np.array([1.0, 1.0, 1.0]))


def test_the_undo_of_a_swap_in_a_branch_numba_prunes_compiles():
    """findings.swap_undo_in_pruned_branch (fuzz seed 26): the names a swap's undo reads get typed
    placeholders like the names adjoints read; compiled, the vjp equals the plain-Python one."""
    import findings

    import sourcead

    xs, u = np.array([0.3, -0.2, 0.5, 0.1, 0.7]), 0.4
    seeds = (np.ones(5), np.linspace(0.5, 1.5, 5))
    got = sourcead.vjp(findings.swap_undo_in_pruned_branch, wrt=("xs", "u"))(xs.copy(), u, cotangent=seeds)
    plain = sourcead.vjp(findings.swap_undo_in_pruned_branch, wrt=("xs", "u"), jit=False)(xs.copy(), u, cotangent=seeds)
    np.testing.assert_allclose(got[1][0], plain[1][0], rtol=1e-14, atol=0)
    assert got[1][1] == plain[1][1]


@pytest.mark.parametrize(
    "name, seeds",
    [("bound_in_pruned_branch", (1.0, np.linspace(0.5, 1.5, 3))), ("offset_in_pruned_branch", 1.0)],
)
def test_what_a_reversed_loop_reads_from_a_branch_numba_prunes_compiles(name, seeds):
    """findings.bound_in_pruned_branch (fuzz seed 29) and offset_in_pruned_branch: the names a
    reversed loop's bounds and its recomputed prefix read get typed placeholders too; compiled,
    the vjp equals the plain-Python one."""
    import findings

    import sourcead

    f = getattr(findings, name)
    x, c = np.array([0.3, -0.2, 0.5]), 0.7
    got = sourcead.vjp(f, wrt=("x", "c"))(x.copy(), c, cotangent=seeds)
    plain = sourcead.vjp(f, wrt=("x", "c"), jit=False)(x.copy(), c, cotangent=seeds)
    np.testing.assert_array_equal(got[1][0], plain[1][0])
    assert got[1][1] == plain[1][1]


@pytest.mark.parametrize("jit", [False, True], ids=["nojit", "jit"])
def test_plain_python_runs_math_as_the_compiled_code_does(jit):
    """findings.sine_of_a_power (fuzz seed 75): the value of a jvp is the function's own, bit for
    bit, where NumPy's `power` and the C library's `pow` differ in the last bit."""
    import findings

    import sourcead

    x, r = 3.2365515053943206, 13.578857749785254
    value, _ = sourcead.jvp(findings.sine_of_a_power, wrt="x", jit=jit)(x, r, tangents=1.0)
    assert value == findings.sine_of_a_power(x, r)


# --- issue 38: the array constructs (fuzz/features_arrays.py) and written arguments (fuzz/written.py)


@pytest.mark.parametrize(
    ("body", "written"),
    [
        ("    x[0] = 1.0\n    x = x * 2.0\n    x[1] = 3.0\n", ("x",)),  # written, then rebound: still written
        ("    x = x * 2.0\n    x[1] = 3.0\n", ()),  # rebound first: a local is written
        ("    v = np.zeros_like(x)\n    x, v = v, x\n    v[0] = 1.0\n", ("x",)),  # through the other name
        ("    v = np.zeros_like(x)\n    x, v = v, x\n    x[0] = 1.0\n", ()),
        ("    v = x * 0.5\n    for t in range(2):\n        v[0] = x[1]\n        x, v = v, x\n", ("x",)),
        ("    x += y\n    s += 1.0\n", ("x",)),  # an array name in place; a float is rebound
        ("    A[:, 0] *= s\n    y[1:] -= x[:-1]\n", ("y", "A")),  # in parameter order
        ("    for row in A:\n        row[0] = s\n", ("A",)),
        ("    r = A[1:]\n    r[0, 0] = s\n    q = A[0]\n    q = 2.0\n", ("A",)),  # a slice is a view
        ("    scale(y, x)\n", ("y",)),
        ("    twice(A, A)\n", ("A",)),  # two helper levels
    ],
)
def test_written_arguments_follow_the_callers_memory(body: str, written: tuple[str, ...]) -> None:
    from fuzz.written import written_params

    helpers = "def scale(C, B):\n    C *= 2.0\n    C += B\n\n\ndef twice(D, E):\n    scale(D, E)\n\n\n"
    source = f"import numpy as np\n\n\n{helpers}def f(x, y, A, s):\n{body}    return s\n"
    assert written_params(source, "f", ("x", "y", "A", "s"), ("x", "y", "A")) == written


def test_programs_without_the_array_constructs_keep_their_text() -> None:
    """The constructs come from a stream of their own: a program that gets none is the program
    the generator wrote without them (the same seed, the same text)."""
    from fuzz.features_arrays import CONSTRUCTS

    without = DEFAULT_FEATURES - set(CONSTRUCTS)
    touched = 0
    for index in range(80):
        program, plain = generate(SEED, index), generate(SEED, index, without)
        assert program is not None and plain is not None
        if set(program.used) & set(CONSTRUCTS):
            touched += 1
        else:
            assert program.source == plain.source and program.written == plain.written
    assert 10 <= touched <= 40  # about SHARE of the programs


def test_every_array_construct_is_generated_and_its_programs_run() -> None:
    from fuzz.features_arrays import CONSTRUCTS
    from fuzz.written import writes_agree

    features = resolve_features("+array_extras_all")
    seen: set[str] = set()
    for index in range(80):
        program = generate(SEED, index, features)
        assert program is not None and runs_finite(program)
        func = load_source(program.source, program.name)
        assert writes_agree(func, program.params, program.written, program.args(0))
        seen |= set(program.used) & set(CONSTRUCTS)
    assert seen == set(CONSTRUCTS)


def _zero_adjoint_case(case):
    rng = np.random.default_rng(0)
    if case == "unchosen_across_statements":
        return (3, rng.standard_normal((5, 5)), rng.standard_normal(5)), "K"
    if case == "overwritten_after_overflow":
        return (rng.standard_normal(6), rng.standard_normal(6), 1.3), "r"
    return (rng.uniform(0.5, 2.0, 6), np.inf), "x"  # zero_element_adjoint and the other spellings


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize(
    "case",
    [
        "unchosen_across_statements",
        "overwritten_after_overflow",
        "zero_element_adjoint",
        "zero_adjoint_in_prange",
        "zero_adjoint_whole_array",
        "zero_adjoint_of_a_sum",
    ],
)
def test_zero_adjoint_times_non_finite_partial(case, jit):
    """An exactly zero adjoint contributes exactly zero, whatever the partial derivative it meets
    in another statement (Enzyme's strong zero): each function is locally constant in `wrt` where
    a partial is infinite or nan, and reverse mode gave nan (0 * inf)."""
    import findings

    import sourcead

    func = getattr(findings, case)
    args, wrt = _zero_adjoint_case(case)
    at = list(inspect.signature(func).parameters).index(wrt)
    with np.errstate(all="ignore"):
        g = sourcead.grad(func, wrt=wrt, jit=jit)(*args)
        x = np.array(args[at], dtype=float)
        fd = np.zeros_like(x)
        for k in np.ndindex(x.shape):  # central differences
            up, down = x.copy(), x.copy()
            up[k] += 1e-6
            down[k] -= 1e-6
            shifted = [list(args), list(args)]
            shifted[0][at], shifted[1][at] = (up if x.ndim else float(up)), (down if x.ndim else float(down))
            fd[k] = (func(*shifted[0]) - func(*shifted[1])) / 2e-6
    assert np.all(fd == 0.0)  # locally constant in `wrt`
    assert np.all(g == 0.0)
