"""Shared test configuration: the programs under test on the path, golden-file updates and a
private sourcead cache."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The programs under test (user functions, the zoo) live apart from the test modules, in
# tests/programs/, and are imported by their plain names (`import findings`, `from zoo import ZOO`);
# processes the tests spawn (multiprocessing, Dask workers) inherit this path.
PROGRAMS = ROOT / "tests" / "programs"
if str(PROGRAMS) not in sys.path:
    sys.path.insert(0, str(PROGRAMS))

# Generated modules (and numba's cache beside them) go to a folder of the checkout, so the suite
# never writes to the user's cache, and a second run starts warm. `make test`'s two pytest-xdist
# workers share it, as any two processes of a user may: modules are written by atomic renames and
# numba's records are checksummed, so a write racing a read costs a compile, never a wrong module.
os.environ.setdefault("SOURCEAD_CACHE_DIR", str(ROOT / ".cache" / "sourcead-tests" / "main"))
# LLVM's level 0 instead of numba's default 3: compiles are most of a cold run, and the tests run
# tiny sizes. Level 1 took about a third less than 3; level 0 another fifth (tests/test_zoo_numeric.py
# cold, 2900 tests: 1061 s at 1, 850 s at 0, on the same loaded machine). Without fast-math flags every
# level computes the same IEEE results; the benchmarks and the demo run at numba's default. Set
# before numba is imported (here: before any test module).
os.environ.setdefault("NUMBA_OPT", "0")

# The CLI under test is this checkout's cli/ (installed as `_sourcead_cli`): an editable install made
# from another checkout maps that name to its own folder.
_cli = importlib.util.spec_from_file_location("_sourcead_cli", ROOT / "cli" / "__init__.py",
                                              submodule_search_locations=[str(ROOT / "cli")])  # fmt: skip
if _cli is not None and _cli.loader is not None and "_sourcead_cli" not in sys.modules:
    sys.modules["_sourcead_cli"] = importlib.util.module_from_spec(_cli)
    _cli.loader.exec_module(sys.modules["_sourcead_cli"])


# The test files that take longest on a cold cache (numba compiles), longest first: `make test`
# hands whole files to its two workers in collection order (`--dist loadfile
# --no-loadscope-reorder`), so these start first and the run does not end on one worker finishing a
# long file alone. pytest-xdist's own order (most tests first) put test_fuzz.py, one test of a
# minute, last. Measured with `--junitxml` on a cold cache (seconds of a worker, 7 Dec 2026:
# zoo_numeric 262, idioms_npbench 132, second_order 120, checkpoint 88, array_rules 85, golden 85,
# npbench 76, nested_kinds 69, fuzz 64, the rest under 60; 14 min 51 s in all); the order only
# moves the wall time.
SLOW_FIRST = (
    "test_zoo_numeric.py",
    "test_idioms_npbench.py",
    "test_second_order.py",
    "test_checkpoint.py",
    "test_array_rules.py",
    "test_golden.py",
    "test_npbench.py",
    "test_nested_kinds.py",
    "test_fuzz.py",
    "test_contract_probes.py",
    "test_perf_shapes.py",
    "test_outsiders_outputs.py",
    "test_parallel.py",
    "test_sparse.py",
    "test_nested.py",
    "test_call_plan.py",
    "test_rules.py",
    "test_block_records.py",
    "test_njit.py",
    "test_tape_records.py",
    "test_npbench_found.py",
    "test_forward_strong_zero.py",
    "test_float32.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {name: k for k, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(SLOW_FIRST)))  # stable: files stay whole


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="Rewrite the golden files of generated code.")


@pytest.fixture(scope="session")
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))
