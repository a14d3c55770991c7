"""Shared test configuration: golden-file updates and a private sourcead cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Generated modules (and numba's cache beside them) go to a folder of the checkout, so the suite
# never writes to the user's cache, and a second run starts warm.
os.environ.setdefault("SOURCEAD_CACHE_DIR", str(ROOT / ".cache" / "sourcead-tests"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="Rewrite the golden files of generated code.")


@pytest.fixture(scope="session")
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))
