"""The declared pass lists (`sourcead/pipeline/passes.py`): `sourcead passes` prints them, `emit --after`
stops after any entry of any mode, and the lists are what `generate()` runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from _sourcead_cli.main import main
from click.testing import CliRunner

from sourcead.pipeline.passes import ADJOINT_FRONT, CORE, FRONT, PIPELINES

ROOT = Path(__file__).resolve().parent.parent
ZOO = str(ROOT / "tests" / "programs" / "zoo.py")
HEAT = str(ROOT / "examples" / "heat.py")


def run(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize(("mode", "name"), [(mode, p.name) for mode, passes in PIPELINES.items() for p in passes])
def test_emit_after_every_pass_of_every_mode(mode, name):
    """After a core-form pass the listing compiles as Python; after a text-level pass, the code does."""
    result = run("emit", f"{ZOO}:heat_euler", "--mode", mode, "--wrt", "u0,kappa", "--after", name)
    assert result.exit_code == 0, result.output
    assert f"after {name}" in result.output.splitlines()[0] or "def heat_euler" in result.output
    compile(result.output, f"after {name}", "exec")


def test_emit_after_the_plan_of_a_checkpointed_reverse():
    plain = run("emit", f"{ZOO}:heat_euler", "--wrt", "u0,kappa", "--after", "plan").output
    budget = run("emit", f"{ZOO}:heat_euler", "--wrt", "u0,kappa", "--after", "plan", "--memory", "1kB").output
    assert "checkpointed" not in plain
    assert "for _step in range(20):  checkpointed" in budget


def test_emit_after_the_last_pass_is_the_module():
    whole = run("emit", f"{HEAT}:heat_loss", "--wrt", "u0,kappa").output
    assert run("emit", f"{HEAT}:heat_loss", "--wrt", "u0,kappa", "--after", "module").output == whole


def test_passes_prints_each_mode_in_order():
    for mode, passes in PIPELINES.items():
        result = run("passes", "--mode", mode)
        assert result.exit_code == 0, result.output
        named = [line.split()[0] for line in result.output.splitlines() if not line.startswith(" ")]
        assert named == [p.name for p in passes]
    assert run("passes").output == run("passes", "--mode", "reverse").output


def test_every_mode_starts_with_the_front_end_and_names_are_unique():
    for mode, passes in PIPELINES.items():
        front = ADJOINT_FRONT if mode in ("reverse", "gradient", "hvp") else FRONT  # rebound: adjoints only
        assert passes[: len(front)] == front and front[: len(CORE)] == CORE
        assert len({p.name for p in passes}) == len(passes)


def test_an_unknown_pass_is_an_error_listing_the_names():
    result = run("emit", f"{HEAT}:heat_loss", "--wrt", "u0", "--after", "liveness")
    assert result.exit_code == 2
    assert "reverse mode has no pass named 'liveness'" in result.output
    assert "parse, fence, normalize" in result.output and "unsigned, module" in result.output
    forward = run("emit", f"{HEAT}:heat_loss", "--mode", "forward", "--wrt", "u0,kappa", "--after", "plan")
    assert forward.exit_code == 2 and "forward mode has no pass named 'plan'" in forward.output


def test_no_adjoint_zero_is_overwritten_before_it_is_read():
    """First contributions turn `s_bar += e` into `s_bar = e`, which makes the `s_bar = 0.0` before
    it dead: dead-code removal runs again after them (`dead_stores`)."""
    names = [p.name for p in PIPELINES["reverse"]]
    assert names.index("first_contributions") < names.index("dead_stores")
    for mode in ("reverse", "gradient"):
        adjoint = run("emit", f"{HEAT}:heat_loss", "--mode", mode, "--wrt", "u0,kappa").output
        assert "s_bar = 0.5 * result_bar" in adjoint
        assert "s_bar = 0.0" not in adjoint


def pass_tables() -> str:
    """docs/architecture.md's pass tables, from the lists themselves: the front end, then each mode's own."""
    header = ["| pass | what it does | reads | makes |", "|---|---|---|---|"]
    lines = header + [_row(p) for p in CORE]
    for mode, passes in PIPELINES.items():
        lines += ["", f"**{mode}**: the front end, then", "", *header]
        lines += [_row(p) for p in passes[len(CORE) :]]
    return "\n".join(lines)


def _row(p) -> str:
    return f"| `{p.name}` | {p.description} | {', '.join(p.needs) or '-'} | {p.produces or '-'} |"


def test_architecture_doc_lists_the_real_passes():
    text = (ROOT / "docs" / "architecture.md").read_text()
    start = "<!-- passes: generated from sourcead/pipeline/passes.py by tests/test_passes.py -->\n"
    end = "\n<!-- /passes -->"
    assert start in text and end in text
    shown = text.split(start, 1)[1].split(end, 1)[0]
    assert shown == pass_tables(), "docs/architecture.md's pass tables drifted; they should read:\n" + pass_tables()
