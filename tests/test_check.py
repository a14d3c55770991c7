"""`sourcead.check_derivative` and `sourcead check`: correct derivatives pass, wrong ones fail.

The public API cannot produce a wrong derivative on purpose, so the failures come from functions
whose finite differences disagree with any derivative at the point (a jump, a kink there), and
from the comparison helper fed wrong numbers.
"""

from __future__ import annotations

import dataclasses
import math
import textwrap
from pathlib import Path

import numpy as np
import pytest
import zoo
from _sourcead_cli.main import main
from click.testing import CliRunner
from mutating import heat_in_place

import sourcead
from sourcead.api.check import Check, CheckReport, compare

ROOT = Path(__file__).resolve().parent.parent


# --- functions with a flaw exactly at the point they are checked at --------------------------


def jump(x):
    if x > 0.5:
        return x + 1.0
    return x


def kink(x):
    return abs(x - 0.5) + x * x


def flat_next_to_big(x):
    # derivative 1e-9 next to a value of 1e8: below what finite differences resolve
    return 1e8 + 1e-9 * x


def sin_squared(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        s += math.sin(x[i] * y) ** 2.0
    return s


def doubled_partials(x):
    return (2.0 * math.cos(x),)  # deliberately twice the derivative of sin


@sourcead.custom_rule(partials=doubled_partials)
def wrong_sine(x):
    return math.sin(x)


def uses_wrong_rule(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        s += wrong_sine(x[i]) * y
    return s


# --- correct derivatives pass ----------------------------------------------------------------

CASES = {case.name: case for case in zoo.ZOO}


@pytest.mark.parametrize("name", ["poly2", "matvec", "mean_and_centered", "heat_euler", "branches"])
@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
def test_zoo_functions_pass(name: str, jit: bool):
    case = CASES[name]
    args = case.make_args(np.random.default_rng(5))
    report = sourcead.check_derivative(case.func, *args, wrt=case.wrt, jit=jit)
    assert report.ok, str(report)
    assert report.wrt == case.wrt
    per_argument = 4 if case.scalar_output else 3  # jvp, vjp, (grad,) dot product
    assert len(report.checks) == 2 + per_argument * len(case.wrt)


def test_written_arguments_are_outputs_and_stay_untouched():
    u = np.sin(np.linspace(0.0, 3.0, 9))
    before = u.copy()
    report = sourcead.check_derivative(heat_in_place, u, 0.2, 5, wrt=("u", "kappa"))
    assert report.ok, str(report)
    np.testing.assert_array_equal(u, before)


def test_wrt_by_position_and_by_name_agree():
    x = np.array([0.3, -0.7, 1.1])
    by_name = sourcead.check_derivative(sin_squared, x, 0.8, wrt=("x", "y"))
    by_position = sourcead.check_derivative(sin_squared, x, 0.8, wrt=(0, 1))
    assert by_name == by_position and by_name.ok
    single = sourcead.check_derivative(sin_squared, x, 0.8, wrt="y")
    assert single.wrt == ("y",) and single.ok


def test_seed_chooses_the_directions():
    x = np.array([0.3, -0.7, 1.1])
    first, again = (sourcead.check_derivative(sin_squared, x, 0.8, seed=3) for _ in range(2))
    other = sourcead.check_derivative(sin_squared, x, 0.8, seed=4)
    assert first == again
    assert first.checks[2].value != other.checks[2].value


def test_a_derivative_too_small_to_see_passes_and_says_so():
    report = sourcead.check_derivative(flat_next_to_big, 0.7)
    assert report.ok, str(report)
    assert "too small for finite differences" in str(report)


def test_the_report_is_frozen_and_reads_as_a_table():
    report = sourcead.check_derivative(sin_squared, np.array([0.3, -0.7]), 0.8, wrt=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.checks = ()  # type: ignore[misc]
    lines = str(report).splitlines()
    assert lines[0].startswith("check_derivative(sin_squared, wrt=y;")
    assert lines[-1] == f"all {len(report.checks)} checks pass"
    body = lines[3:-1]
    assert len(body) == len(report.checks) and all(line.endswith("PASS") for line in body)
    assert any(line.startswith("grad vs finite differences, wrt y") for line in body)


# --- wrong derivatives fail ------------------------------------------------------------------


def test_a_jump_at_the_point_fails_with_a_note():
    report = sourcead.check_derivative(jump, 0.5)
    assert not report.ok
    failed = {check.what for check in report.failures}
    assert failed == {f"{mode} vs finite differences, wrt x" for mode in ("jvp", "vjp", "grad")}
    assert all("do not settle" in check.note for check in report.failures)
    assert str(report).splitlines()[-1] == f"3 of {len(report.checks)} checks FAIL"


def test_custom_rules_pass_when_right_and_fail_when_wrong():
    import custom_rules

    x = np.array([0.3, -1.2, 2.0])
    assert sourcead.check_derivative(custom_rules.uses_custom, x, 0.7, wrt=(0, 1)).ok
    report = sourcead.check_derivative(uses_wrong_rule, x, 0.7, wrt=(0, 1))
    assert {check.wrt for check in report.failures} == {"x"}, str(report)  # y's derivative is right
    assert all(check.what.startswith(("jvp", "vjp", "grad")) for check in report.failures)
    assert not any(check.note for check in report.failures)  # a plain disagreement, not a jump


def test_a_kink_at_the_point_fails():
    # central differences of |x - 0.5| at 0.5 see the average slope 0; the derivative says 1
    report = sourcead.check_derivative(kink, 0.5, jit=False)
    assert not report.ok
    assert all(check.ok == check.what.startswith(("value", "dot")) for check in report.checks), str(report)


def test_compare_fails_on_wrong_numbers():
    right = compare("d", "x", 1.0 + 1e-9, 1.0, scale=1.0, rtol=1e-6)
    wrong = compare("d", "x", 1.01, 1.0, scale=1.0, rtol=1e-6)
    assert right.ok and not wrong.ok
    assert wrong.error == pytest.approx(0.01) and wrong.allowed == pytest.approx(1e-6)
    assert compare("d", "x", 1.01, 1.0, scale=1.0, rtol=1e-6, slack=0.02).ok  # within the FD error
    assert not compare("d", "x", 1.0, 1.0, scale=1.0, rtol=1e-6, trusted=False).ok  # FD proved nothing
    assert not compare("d", "x", float("nan"), 1.0, scale=1.0, rtol=1e-6).ok
    assert str(wrong).endswith("FAIL") and str(right).endswith("PASS")


def test_one_failed_check_fails_the_report():
    good = Check("a", "x", 1.0, 1.0, 0.0, 1e-6, True)
    bad = dataclasses.replace(good, what="b", ok=False)
    report = CheckReport("f", ("x",), True, 1e-6, 0, (good, bad))
    assert not report.ok and report.failures == (bad,)
    assert CheckReport("f", ("x",), True, 1e-6, 0, (good,)).ok


# --- the command line --------------------------------------------------------------------------


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def _module(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    return str(path)


def test_cli_passes_on_the_heat_example():
    result = run("check", f"{ROOT / 'examples' / 'heat.py'}:heat_loss")
    assert result.exit_code == 0, result.output
    assert "wrt=u0, kappa;" in result.output  # the float arguments by default, not n_steps
    assert result.output.strip().endswith("checks pass")


def test_cli_exits_1_when_a_check_fails(tmp_path):
    path = _module(
        tmp_path,
        "cli_jump",
        """
        def step(x, y):
            if x > 0.5:
                return x * y + 1.0
            return x * y

        def example_args():
            return (0.5, 2.0)
        """,
    )
    result = run("check", f"{path}:step", "--wrt", "x", "--no-jit")
    assert result.exit_code == 1, result.output
    assert "FAIL" in result.output and "Traceback" not in result.output


def test_cli_prefers_example_args_of_the_function(tmp_path):
    path = _module(
        tmp_path,
        "cli_two",
        """
        import numpy as np

        def norm2(x):
            s = 0.0
            for i in range(x.shape[0]):
                s += x[i] * x[i]
            return s

        def example_args():
            return ("not", "these")

        def example_args_norm2():
            return (np.array([1.0, 2.0, 3.0]),)
        """,
    )
    result = run("check", f"{path}:norm2")
    assert result.exit_code == 0, result.output
    assert "wrt=x;" in result.output


@pytest.mark.parametrize(
    "body, message",
    [
        ("def f(x):\n    return x * x\n", "define example_args_f() or example_args()"),
        ("def f(x):\n    return x * x\n\ndef example_args():\n    return 2.0\n", "must return a tuple"),
        ("def f(x):\n    return x * x\n\ndef example_args():\n    raise OSError('no data')\n", "OSError: no data"),
        ("def f(n):\n    return float(n)\n\ndef example_args():\n    return (3,)\n", "no argument of f is a float"),
        (
            "def f(x):\n    return x * x\n\ndef example_args():\n    return (1.0, 2.0)\n",
            "gives 2 arguments; f takes 1 (x)",
        ),
    ],
)
def test_cli_bad_input_gives_one_line_and_exit_code_2(tmp_path, body: str, message: str):
    result = run("check", f"{_module(tmp_path, 'cli_bad', body)}:f")
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.output
    assert "Traceback" not in result.output


def test_cli_missing_file_exits_2():
    result = run("check", "missing.py:f")
    assert result.exit_code == 2 and "no such file" in result.output
