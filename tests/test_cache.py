"""The disk cache: private, verified, rebuilt when damaged, and reused by a new process.

What happens when the folder was open to other users (refused, `cache clear` fixes it) is in
`test_cache_trust.py`.

Functions under test live in a module written to a temporary folder, so a test can edit them.
Tests that need a fresh process run a short child script; the others reset this process's memo
of loaded modules, which is all a new process would lack.
"""

from __future__ import annotations

import importlib.util
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import sourcead
from cli.main import main
from sourcead.build import cache_writes
from sourcead.build import compile as compile_pass

USER_MODULE = """
import numpy as np

SCALE = {scale}


def loss(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += SCALE * x[i] * x[i]
    return s
"""

CHILD = """
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import sourcead, sourcead.pipeline.driver as pipeline, userfns
runs = []
generate = pipeline.generate
pipeline.generate = lambda *args, **kwargs: runs.append(1) or generate(*args, **kwargs)
g = sourcead.grad(userfns.loss)
result = g(np.array([1.0, 2.0, 3.0]))
stats = g._default.call.stats
print(json.dumps({
    "result": result.tolist(),
    "pipeline_runs": len(runs),
    "hits": sum(stats.cache_hits.values()),
    "misses": sum(stats.cache_misses.values()),
}))
"""


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("SOURCEAD_CACHE_DIR", str(folder))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(compile_pass, "_LOADED", {})  # as in a new process: nothing loaded yet
    return folder


def user_module(folder: Path, scale: float, name: str = "userfns"):
    """Write the user module with SCALE = scale and import it afresh."""
    path = folder / f"{name}.py"
    path.write_text(USER_MODULE.format(scale=scale), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"{name}_{abs(hash((str(path), scale)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_child(src: Path, cache: Path) -> dict:
    env = dict(os.environ, SOURCEAD_CACHE_DIR=str(cache))
    env.pop("NUMBA_CACHE_DIR", None)
    out = subprocess.run([sys.executable, "-c", CHILD, str(src)], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def modules_in(cache: Path) -> list[Path]:
    return sorted(cache.glob("sourcead_*.py"))


# --- the folder ------------------------------------------------------------------------------


def test_the_cache_folder_is_created_private(cache):
    sourcead.grad(user_module(cache.parent, 1.0).loss, jit=False)
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700


def test_a_folder_others_can_write_to_is_refused_until_cleared(cache):
    # sourcead 0.1 made such a folder private and then imported from it: what others had planted
    # while it was open ran. Now it is refused, and `sourcead cache clear` is the fix.
    cache.mkdir(mode=0o777)
    os.chmod(cache, 0o777)
    loss = user_module(cache.parent, 1.0).loss
    with pytest.raises(sourcead.SourceADError, match="writable by other users") as info:
        sourcead.grad(loss, jit=False)
    assert "sourcead cache clear" in str(info.value)
    assert stat.S_IMODE(cache.stat().st_mode) == 0o777  # nothing repaired behind the user's back
    assert CliRunner().invoke(main, ["cache", "clear"]).exit_code == 0
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    np.testing.assert_array_equal(sourcead.grad(loss, jit=False)(np.array([1.0])), [2.0])


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root to hand a folder to another user")
def test_a_folder_owned_by_another_user_is_refused(cache):
    cache.mkdir(mode=0o700)
    os.chown(cache, 65534, 65534)
    with pytest.raises(sourcead.SourceADError, match="belongs to another user"):
        sourcead.grad(user_module(cache.parent, 1.0).loss, jit=False)


def test_a_file_in_place_of_the_folder_is_a_warning_and_derivatives_compile_in_memory(cache, monkeypatch):
    # the cache is an accelerator, not a requirement (issue 38): nothing is read from or written to it
    cache.write_text("not a folder")
    monkeypatch.setattr(cache_writes, "_WARNED", [])
    with pytest.warns(cache_writes.CacheWarning, match=r"cache folder .*cache \(a file, not a folder\)"):
        g = sourcead.grad(user_module(cache.parent, 1.0).loss, jit=False)
    np.testing.assert_array_equal(g(np.array([1.0])), [2.0])
    assert cache.read_text() == "not a folder"


# --- keys: reuse and invalidation ------------------------------------------------------------


def test_a_new_process_reuses_the_module_and_numbas_machine_code(tmp_path):
    src, cache = tmp_path / "src", tmp_path / "cache"
    src.mkdir()
    user_module(src, 0.5)
    cold = run_child(src, cache)
    warm = run_child(src, cache)
    assert cold["result"] == warm["result"] == [1.0, 2.0, 3.0]
    assert (cold["hits"], cold["misses"]) == (0, 1)
    assert (warm["hits"], warm["misses"]) == (1, 0)  # numba loaded the machine code from disk
    assert (cold["pipeline_runs"], warm["pipeline_runs"]) == (1, 0)  # the warm module came from its key
    assert len(modules_in(cache)) == 1


def test_editing_the_function_or_a_global_it_reads_gives_new_code(cache, tmp_path):
    first = sourcead.grad(user_module(tmp_path, 1.0).loss, jit=False)
    np.testing.assert_array_equal(first(np.array([1.0, 2.0])), [2.0, 4.0])
    second = sourcead.grad(user_module(tmp_path, 3.0).loss, jit=False)  # SCALE is frozen into the code
    np.testing.assert_array_equal(second(np.array([1.0, 2.0])), [6.0, 12.0])
    path = tmp_path / "userfns.py"
    path.write_text(path.read_text().replace("SCALE * x[i] * x[i]", "SCALE * x[i]"), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("userfns_edited", path)
    edited = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(edited)
    np.testing.assert_array_equal(sourcead.grad(edited.loss, jit=False)(np.array([1.0, 2.0])), [3.0, 3.0])
    assert len(modules_in(cache)) == 3


def test_the_key_hit_gives_the_same_derivative_as_the_pipeline(cache, tmp_path):
    loss = user_module(tmp_path, 2.0).loss
    built = sourcead.grad(loss, jit=False)
    compile_pass._LOADED.clear()
    reused = sourcead.grad(loss, jit=False)
    assert reused.source == built.source
    assert reused._default.spec == built._default.spec


# --- damage is rebuilt, a module that does not match its hash is not run ---------------------------------------------


def test_a_truncated_module_is_rebuilt(cache, tmp_path):
    loss = user_module(tmp_path, 1.0).loss
    text = sourcead.grad(loss, jit=False).source
    (module,) = modules_in(cache)
    module.write_text(text[: len(text) // 2], encoding="utf-8")
    compile_pass._LOADED.clear()
    np.testing.assert_array_equal(sourcead.grad(loss, jit=False)(np.array([1.0])), [2.0])
    assert module.read_text(encoding="utf-8") == text


def test_a_module_that_does_not_match_its_hash_is_never_executed(cache, tmp_path):
    loss = user_module(tmp_path, 1.0).loss
    text = sourcead.grad(loss, jit=False).source
    (module,) = modules_in(cache)
    marker = tmp_path / "planted-code-ran"
    module.write_text(f"open({str(marker)!r}, 'w').close()\n" + text, encoding="utf-8")
    compile_pass._LOADED.clear()
    np.testing.assert_array_equal(sourcead.grad(loss, jit=False)(np.array([1.0])), [2.0])
    assert not marker.exists()
    assert module.read_text(encoding="utf-8") == text


@pytest.mark.parametrize("damage", ["truncate", "garbage", "wrong module name"])
def test_a_damaged_key_file_is_rebuilt(cache, tmp_path, damage):
    loss = user_module(tmp_path, 1.0).loss
    sourcead.grad(loss, jit=False)
    (key,) = (cache / "keys").glob("*.json")
    text = key.read_text()
    broken = {
        "truncate": text[:20],
        "garbage": "\x00\xff not json",
        "wrong module name": text.replace("sourcead_loss_vjp_", "../../evil_"),
    }[damage]
    key.write_text(broken, encoding="utf-8", errors="surrogateescape")
    compile_pass._LOADED.clear()
    np.testing.assert_array_equal(sourcead.grad(loss, jit=False)(np.array([1.0])), [2.0])
    assert key.read_text() == text


def test_damaged_numba_cache_files_are_compiled_again_not_a_crash(tmp_path):
    src, cache = tmp_path / "src", tmp_path / "cache"
    src.mkdir()
    user_module(src, 0.5)
    run_child(src, cache)
    index = next((cache / "__pycache__").glob("*.nbi"))
    data = next((cache / "__pycache__").glob("*.nbc"))
    data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])
    again = run_child(src, cache)
    assert again["result"] == [1.0, 2.0, 3.0] and again["misses"] == 1, again
    index.write_bytes(b"\x80\x04garbage")
    again = run_child(src, cache)
    assert again["result"] == [1.0, 2.0, 3.0] and again["misses"] == 1, again
    assert run_child(src, cache)["hits"] == 1  # the rewritten records are good


# --- sourcead cache info / clear --------------------------------------------------------------


def test_cache_info_and_clear_touch_only_sourcead_files(cache, tmp_path):
    sourcead.grad(user_module(tmp_path, 1.0).loss, jit=False)
    keep = cache / "notes.txt"
    keep.write_text("mine")
    runner = CliRunner()
    info = runner.invoke(main, ["cache", "info"])
    assert info.exit_code == 0, info.output
    assert f"cache folder: {cache}" in info.output
    assert "generated modules: 1" in info.output and "key files: 1" in info.output
    cleared = runner.invoke(main, ["cache", "clear"])
    assert cleared.exit_code == 0 and "deleted 2 files" in cleared.output
    assert modules_in(cache) == [] and keep.read_text() == "mine"
    assert "generated modules: 0" in runner.invoke(main, ["cache", "info"]).output


def test_cache_help_lists_info_and_clear():
    result = CliRunner().invoke(main, ["cache", "--help"])
    assert result.exit_code == 0
    assert "info" in result.output and "clear" in result.output
