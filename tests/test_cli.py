"""The command line: `sourcead emit` and `sourcead activity`, and its errors (exit code 2)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from _sourcead_cli.main import main
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ROOT / "tests" / "programs"
HEAT = str(ROOT / "examples" / "heat.py")


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_emit_prints_the_module_and_is_deterministic():
    first = run("emit", f"{HEAT}:heat_loss", "--mode", "reverse", "--wrt", "u0,kappa")
    second = run("emit", f"{HEAT}:heat_loss", "--mode", "reverse", "--wrt", "u0,kappa")
    assert first.exit_code == 0, first.output
    assert "def heat_loss_vjp(u0, kappa, n_steps, out_bar):" in first.output
    assert first.output == second.output


def test_emit_gradient_mode_prints_what_grad_runs():
    result = run("emit", f"{HEAT}:heat_loss", "--mode", "gradient", "--wrt", "u0,kappa")
    assert result.exit_code == 0, result.output
    assert "def heat_loss_grad(u0, kappa, n_steps, out_bar):" in result.output
    assert "value =" not in result.output and "return (u0_bar, kappa_bar)" in result.output
    import sourcead

    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import heat
    finally:
        sys.path.pop(0)
    assert result.output == sourcead.grad(heat.heat_loss, wrt=("u0", "kappa")).source  # what grad compiles


def test_emit_with_a_memory_budget_checkpoints_the_time_loop():
    result = run("emit", str(PROGRAMS / "checkpointing.py") + ":heat_swap", "--wrt", "u0", "--memory", "64kB")
    assert result.exit_code == 0, result.output
    assert "checkpointed loop" in result.output and "as many snapshots as 64000 bytes hold" in result.output
    bad = run("emit", f"{HEAT}:heat_loss", "--wrt", "u0", "--memory", "lots")
    assert bad.exit_code == 2 and "--memory: memory='lots' is not a size" in bad.output


def test_emit_to_file_matches_the_api(tmp_path):
    import sourcead

    target = tmp_path / "heat_jvp.py"
    result = run("emit", f"{HEAT}:heat_loss", "--mode", "forward", "--wrt", "0", "-o", str(target))
    assert result.exit_code == 0, result.output
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import heat
    finally:
        sys.path.pop(0)
    assert target.read_text() == sourcead.differentiable(heat.heat_loss).source(mode="forward", wrt=0)


@pytest.mark.parametrize(
    "args, message",
    [
        (["emit", "missing.py:f", "--wrt", "x"], "no such file: missing.py"),
        (["emit", f"{HEAT}:nope", "--wrt", "x"], "has no function named 'nope'"),
        (["emit", f"{HEAT}", "--wrt", "x"], "expected PATH:FUNC"),
        (["emit", f"{HEAT}:heat_loss", "--wrt", "y"], "wrt='y' is not an argument of heat_loss"),
        (["emit", f"{HEAT}:heat_loss", "--wrt", "n_steps"], "uses it as an integer"),
    ],
)
def test_bad_input_gives_one_line_and_exit_code_2(args, message):
    result = run(*args)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert message in lines[0]
    assert "Traceback" not in result.output


def test_unsupported_code_shows_the_line_with_a_caret():
    bad = str(PROGRAMS / "bad_functions.py")
    result = run("emit", f"{bad}:uses_try", "--wrt", "x")
    assert result.exit_code == 2
    assert "bad_functions.py, line" in result.output
    assert "try:" in result.output and "^" in result.output


def test_activity_explains_each_variable():
    result = run("activity", f"{HEAT}:heat_loss", "--wrt", "u0")
    assert result.exit_code == 0, result.output
    lines = {line.split()[0]: line for line in result.output.splitlines()}
    assert "active" in lines["u"] and "varied from u0" in lines["u"]
    assert "constant" in lines["kappa"] and "does not depend on u0" in lines["kappa"]
    assert "constant" in lines["n"] and "int" in lines["n"]


def test_python_dash_m_and_help_work():
    proc = subprocess.run([sys.executable, "-m", "sourcead", "--help"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0
    assert "emit" in proc.stdout and "activity" in proc.stdout


def test_emit_for_whole_array_arguments_of_a_given_ndim():
    vec = str(PROGRAMS / "vectorized.py")
    result = run("emit", f"{vec}:least_squares", "--wrt", "A,x", "--array", "A:2", "--array", "x", "--array", "b")
    assert result.exit_code == 0, result.output
    assert "A_bar = outer_of(A, True, " in result.output  # the rank-1 update written into a new A_bar
    bad = run("emit", f"{vec}:least_squares", "--wrt", "A", "--array", "A:33")
    assert bad.exit_code == 2 and "--array takes NAME" in bad.output
    # 4-D (NPBench's softmax and convolutions): as many dimensions as numba's arrays take
    four = run("emit", f"{vec}:least_squares", "--wrt", "A", "--array", "A:4")
    assert four.exit_code == 2 and "--array takes NAME" not in four.output and "line " in four.output
    # without --array the code's use of A says too little: the error says how to tell it
    untold = run("emit", f"{vec}:least_squares", "--wrt", "A,x")
    assert untold.exit_code == 2, untold.output
    assert "--array NAME[:NDIM]" in untold.output and "line " in untold.output, untold.output


def test_emit_for_an_integer_array_the_code_copies_first(tmp_path):
    # the type guess sees J's elements used as indices, not idx's: --array idx:1:int says so
    (tmp_path / "copied.py").write_text(
        "def f(x, idx):\n    J = idx.copy()\n    s = 0.0\n    for i in range(J.shape[0]):\n"
        "        s += x[J[i]] ** 2\n    return s\n"
    )
    guessed = run("emit", f"{tmp_path / 'copied.py'}:f", "--wrt", "x")
    assert guessed.exit_code != 0 and "an index must be an integer" in guessed.output
    told = run("emit", f"{tmp_path / 'copied.py'}:f", "--wrt", "x", "--array", "idx:1:int")
    assert told.exit_code == 0, told.output
    assert "x_bar[J[i]] += strong_zero(2.0 * t0 * s_bar, s_bar)" in told.output
    bad = run("emit", f"{tmp_path / 'copied.py'}:f", "--wrt", "x", "--array", "idx:1:long")
    assert bad.exit_code == 2 and "NAME:NDIM:DTYPE (float, int or bool)" in bad.output
    flat = run("emit", f"{tmp_path / 'copied.py'}:f", "--wrt", "x", "--array", "idx:0:int")
    assert flat.exit_code == 2 and "NAME:NDIM (1 to 32)" in flat.output
    sys.path.insert(0, str(tmp_path))
    try:
        import copied
    finally:
        sys.path.pop(0)
    import sourcead

    assert sourcead.differentiable(copied.f).source(wrt="x", arrays={"idx": (1, "int")}) == told.output
    with pytest.raises(sourcead.SourceADError, match="not an array's number of dimensions"):
        sourcead.differentiable(copied.f).source(wrt="x", arrays={"idx": (1, "complex")})


def test_emit_after_a_pass_prints_the_core_form():
    """`--after normalize` shows the core form; kinds adds every variable's type, activity what
    carries derivatives. The listing is Python: it compiles."""
    normalized = run("emit", f"{HEAT}:heat_loss", "--wrt", "u0", "--after", "normalize")
    assert normalized.exit_code == 0, normalized.output
    assert normalized.output.startswith("# core form of heat_loss after normalize")
    compile(normalized.output, "listing", "exec")
    typed = run("emit", f"{HEAT}:heat_loss", "--wrt", "u0", "--after", "kinds").output
    assert "# u0: a 1-D float64 array" in typed
    active = run("emit", f"{HEAT}:heat_loss", "--wrt", "u0", "--after", "activity").output
    assert "# active (varied and useful):" in active and "u0" in active.split("active (varied and useful):")[1]
    bad = run("emit", f"{HEAT}:heat_loss", "--wrt", "u0", "--after", "reverse")
    assert bad.exit_code == 2


def test_source_takes_the_array_options_of_emit(tmp_path):
    import sourcead

    (tmp_path / "whole.py").write_text("import numpy as np\n\ndef f(A, x):\n    return np.sum(A * x)\n")
    result = run("emit", f"{tmp_path / 'whole.py'}:f", "--wrt", "A", "--array", "A:2", "--array", "x")
    assert result.exit_code == 0, result.output
    sys.path.insert(0, str(tmp_path))
    try:
        import whole
    finally:
        sys.path.pop(0)
    source = sourcead.differentiable(whole.f).source(wrt="A", arrays={"A": 2, "x": 1})
    assert source == result.output
    assert "unbroadcast" in source  # A (2-D) and x (1-D) meet: the adjoint sums over the broadcast axis


def test_emit_primal_prints_the_functions_own_code_whatever_wrt_says():
    """`--mode primal` with `--wrt` (which the command asks for): no tangents in the text, and it
    runs, giving the function's value (with the arguments active, the copy of a written argument
    and the code writing it had carried `_dot` lines naming undefined tangents)."""
    import numpy as np

    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import heat
    finally:
        sys.path.pop(0)
    result = run("emit", f"{HEAT}:heat_loss", "--mode", "primal", "--wrt", "u0,kappa")
    assert result.exit_code == 0, result.output
    assert "_dot" not in result.output and "primal mode." in result.output
    namespace: dict = {}
    exec(compile(result.output, "heat_primal", "exec"), namespace)
    u0 = np.linspace(0.0, 1.0, 16) ** 2
    assert namespace["heat_loss_primal"](u0.copy(), 0.1, 5) == heat.heat_loss(u0.copy(), 0.1, 5)
    after = run("emit", f"{HEAT}:heat_loss", "--mode", "primal", "--wrt", "u0", "--after", "primal")
    assert after.exit_code == 0 and "_dot" not in after.output, after.output
