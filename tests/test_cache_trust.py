"""The cache trust model (docs/design.md, "Cache trust model"), scenario by scenario (issue 17).

sourcead imports modules and numba unpickles records from the cache folder, so whoever can write
there can run code as the user. The rule: every level read from (the folder, `keys/`,
`__pycache__/`, each module, key file and numba record) must belong to the user and be writable
by nobody else, or it is refused with a message that says how to fix it; a key file must name
the key it is read for; numba's records live in that folder whatever NUMBA_CACHE_DIR says.

Planting "as another user" needs a second uid: the planted files are handed to uid 65534
(`nobody`) with `os.chown`, which only root may do; those tests are skipped otherwise. The
scenarios where the user's own files are left open to others (chmod -R 777) need no root.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from numba.core.caching import _CacheLocator

import sourcead
from cli.main import main
from sourcead.build import compile as compile_pass

OTHER_UID = 65534  # nobody
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
needs_root = pytest.mark.skipif(
    not IS_ROOT, reason="needs root: only root can hand the planted files to a second uid (os.chown)"
)

USER_MODULE = """
def loss(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    return s


def other(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += 5.0 * x[i]
    return s
"""

CHILD = """
import json, os, sys
import numpy as np
os.umask(int(sys.argv[2], 8))
sys.path.insert(0, sys.argv[1])
import sourcead, userfns_trust
g = sourcead.grad(userfns_trust.loss)
result = g(np.array([1.0, 2.0, 3.0]))
stats = g._default.call.stats
print(json.dumps({"result": result.tolist(), "hits": sum(stats.cache_hits.values()),
                  "misses": sum(stats.cache_misses.values())}))
"""

X = np.array([1.0, 2.0, 3.0])


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("SOURCEAD_CACHE_DIR", str(folder))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(compile_pass, "_LOADED", {})  # as in a new process: nothing loaded yet
    return folder


@pytest.fixture
def fns(tmp_path):
    """The user module, importable here and by a child process (from tmp_path / "src")."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "userfns_trust.py").write_text(USER_MODULE, encoding="utf-8")
    sys.path.insert(0, str(src))
    sys.modules.pop("userfns_trust", None)
    try:
        import userfns_trust

        yield userfns_trust
    finally:
        sys.path.remove(str(src))
        sys.modules.pop("userfns_trust", None)


def fresh_process() -> None:
    compile_pass._LOADED.clear()


def run_child(src: Path, cache: Path, numba_cache_dir: Path | None = None, umask: int = 0o022) -> dict:
    env = dict(os.environ, SOURCEAD_CACHE_DIR=str(cache))
    env.pop("NUMBA_CACHE_DIR", None)
    if numba_cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = str(numba_cache_dir)
    out = subprocess.run([sys.executable, "-c", CHILD, str(src), oct(umask)], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def the_key_file(cache: Path) -> Path:
    (key,) = (cache / "keys").glob("*.json")
    return key


def plant_module(cache: Path, key_file: Path, marker: Path) -> Path:
    """What an attacker who can write to the folder does: a module that touches `marker`, named
    by its own hash, and the key file rewritten to name it; the hashes all match."""
    record = json.loads(key_file.read_text(encoding="utf-8"))
    legit = (cache / f"{record['module']}.py").read_text(encoding="utf-8")
    text = f"open({str(marker)!r}, 'w').close()\n" + legit
    name, digest = compile_pass.module_name(record["spec"]["entry"], text)
    planted = cache / f"{name}.py"
    planted.write_text(text, encoding="utf-8")
    record.update(module=name, sha256=digest)
    with open(key_file, "w", encoding="utf-8") as fh:  # in place, as a writer of an open file would
        json.dump(record, fh)
    return planted


def give_to_other_user(*paths: Path) -> None:
    for path in paths:
        os.chown(path, OTHER_UID, OTHER_UID, follow_symlinks=False)


def refused(fns, match: str) -> pytest.ExceptionInfo:
    with pytest.raises(sourcead.SourceADError, match=match) as info:
        sourcead.grad(fns.loss)(X)
    return info


def clear() -> None:
    result = CliRunner().invoke(main, ["cache", "clear"])
    assert result.exit_code == 0, result.output


def assert_only_ours_and_private(cache: Path) -> None:
    for path in [cache, *cache.rglob("*")]:
        info = path.lstat()
        assert info.st_uid == os.geteuid(), path
        if stat.S_ISDIR(info.st_mode):
            assert stat.S_IMODE(info.st_mode) == 0o700, path
        elif path.name != "notes.txt":
            assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600, path


# --- finding 4: another user's code runs -----------------------------------------------------


@needs_root
@pytest.mark.parametrize("root_after", ["left open (0777)", "made private (0700) afterwards"])
def test_a_module_planted_by_another_user_is_never_imported(cache, fns, tmp_path, root_after):
    sourcead.grad(fns.loss, jit=False)
    key_file = the_key_file(cache)
    os.chmod(cache, 0o777)  # the user's folder, left open to everyone
    marker = tmp_path / "planted-code-ran"
    planted = plant_module(cache, key_file, marker)
    give_to_other_user(planted, key_file)
    if root_after.startswith("made private"):  # what sourcead 0.1 did at the next start
        os.chmod(cache, 0o700)
    fresh_process()
    info = refused(fns, "writable by other users" if root_after.startswith("left") else "belongs to another user")
    assert "sourcead cache clear" in str(info.value)
    assert not marker.exists()
    clear()
    fresh_process()
    np.testing.assert_array_equal(sourcead.grad(fns.loss)(X), 2 * X)
    assert not marker.exists()
    assert_only_ours_and_private(cache)


@needs_root
def test_a_keys_folder_created_by_another_user_is_refused(cache, fns, tmp_path):
    sourcead.grad(fns.loss, jit=False)
    key_file = the_key_file(cache)
    record = key_file.read_text(encoding="utf-8")
    for path in (cache / "keys").iterdir():
        path.unlink()
    (cache / "keys").rmdir()
    os.chmod(cache, 0o777)
    (cache / "keys").mkdir(mode=0o777)  # the other user was first
    key_file.write_text(record, encoding="utf-8")
    marker = tmp_path / "planted-code-ran"
    planted = plant_module(cache, key_file, marker)
    give_to_other_user(cache / "keys", key_file, planted)
    os.chmod(cache, 0o700)
    fresh_process()
    refused(fns, "keys")
    assert not marker.exists()
    clear()
    fresh_process()
    np.testing.assert_array_equal(sourcead.grad(fns.loss)(X), 2 * X)
    assert not marker.exists()
    assert_only_ours_and_private(cache)


LEVELS = ["root", "keys/", "__pycache__/", "key file", "module", "numba index", "numba data"]


@pytest.mark.parametrize("level", LEVELS)
def test_every_level_open_to_others_is_refused(cache, fns, level):
    """After `chmod -R 777`, sourcead 0.1 made the root private and trusted the rest."""
    sourcead.grad(fns.loss)(X)  # jit: numba's records too
    record = json.loads(the_key_file(cache).read_text(encoding="utf-8"))
    paths = {
        "root": cache,
        "keys/": cache / "keys",
        "__pycache__/": cache / "__pycache__",
        "key file": the_key_file(cache),
        "module": cache / f"{record['module']}.py",
        "numba index": next((cache / "__pycache__").glob("*.nbi")),
        "numba data": next((cache / "__pycache__").glob("*.nbc")),
    }
    os.chmod(paths[level], 0o777 if paths[level].is_dir() else 0o666)
    fresh_process()
    info = refused(fns, "writable by other users")
    assert str(paths[level]) in str(info.value) and "sourcead cache clear" in str(info.value)
    clear()
    fresh_process()
    np.testing.assert_array_equal(sourcead.grad(fns.loss)(X), 2 * X)
    assert_only_ours_and_private(cache)


def test_after_chmod_R_777_a_module_planted_in_the_users_own_files_never_runs(cache, fns, tmp_path):
    """Files left 0666 can be rewritten by anyone while they keep the user as owner."""
    sourcead.grad(fns.loss)(X)
    for path in [cache, *cache.rglob("*")]:
        os.chmod(path, 0o777 if path.is_dir() else 0o666)
    marker = tmp_path / "planted-code-ran"
    plant_module(cache, the_key_file(cache), marker)
    os.chmod(cache, 0o700)  # only the root repaired, as sourcead 0.1 did
    fresh_process()
    refused(fns, "writable by other users")
    assert not marker.exists()
    # chmod -R go-w alone is not a fix: the rewritten files would then look trustworthy
    clear()
    fresh_process()
    np.testing.assert_array_equal(sourcead.grad(fns.loss)(X), 2 * X)
    assert not marker.exists()
    assert_only_ours_and_private(cache)


def test_a_symbolic_link_in_place_of_a_module_is_refused(cache, fns, tmp_path):
    sourcead.grad(fns.loss, jit=False)
    record = json.loads(the_key_file(cache).read_text(encoding="utf-8"))
    module = cache / f"{record['module']}.py"
    elsewhere = tmp_path / "elsewhere.py"
    elsewhere.write_bytes(module.read_bytes())
    module.unlink()
    module.symlink_to(elsewhere)
    fresh_process()
    refused(fns, "symbolic link")
    clear()
    assert elsewhere.exists()  # the link is deleted, not what it points to
    fresh_process()
    np.testing.assert_array_equal(sourcead.grad(fns.loss, jit=False)(X), 2 * X)


def _planted_pickle(marker: Path) -> bytes:
    """A numba index record, prefixed with its SHA-256 as sourcead 0.1 wrote them, whose
    unpickling creates `marker`."""

    class Plant:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    payload = pickle.dumps(Plant())
    return hashlib.sha256(payload).digest() + payload


def _numba_index_name(module: Path, entry: str) -> str:
    """The name numba gives the index file of `entry` in `module` (see numba.core.caching)."""
    lines = module.read_text(encoding="utf-8").splitlines()
    lineno = next(i for i, line in enumerate(lines, 1) if re.match(rf"def {entry}\(", line))
    abiflags = getattr(sys, "abiflags", "")
    return f"{module.stem}.{entry}-{lineno}.py{sys.version_info[0]}{sys.version_info[1]}{abiflags}.nbi"


def test_a_planted_pickle_in_a_shared_NUMBA_CACHE_DIR_is_never_loaded(cache, fns, tmp_path):
    """NUMBA_CACHE_DIR is a shared sticky folder; another user pre-created numba's folder for our
    module there. Our modules' records stay in our private folder, so it is never read."""
    src, shared = tmp_path / "src", tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    sourcead.grad(fns.loss, jit=False)  # the module exists, numba's records do not yet
    record = json.loads(the_key_file(cache).read_text(encoding="utf-8"))
    module = cache / f"{record['module']}.py"
    planted_dir = shared / _CacheLocator.get_suitable_cache_subpath(str(module))
    planted_dir.mkdir(mode=0o777)
    os.chmod(planted_dir, 0o777)
    marker = tmp_path / "planted-pickle-ran"
    index = planted_dir / _numba_index_name(module, record["spec"]["entry"])
    index.write_bytes(_planted_pickle(marker))
    os.chmod(index, 0o644)
    if IS_ROOT:
        give_to_other_user(planted_dir, index)
    cold = run_child(src, cache, numba_cache_dir=shared)
    warm = run_child(src, cache, numba_cache_dir=shared)
    assert cold["result"] == warm["result"] == [2.0, 4.0, 6.0]
    assert (warm["hits"], warm["misses"]) == (1, 0)  # warm from our own folder
    assert not marker.exists()
    assert sorted(p.name for p in shared.rglob("*")) == sorted([planted_dir.name, index.name])  # nothing of ours
    assert len(list((cache / "__pycache__").glob("*.nbi"))) == 1
    assert_only_ours_and_private(cache)


@needs_root
def test_a_pickle_planted_by_another_user_in_our_pycache_is_refused(cache, fns, tmp_path):
    sourcead.grad(fns.loss, jit=False)
    record = json.loads(the_key_file(cache).read_text(encoding="utf-8"))
    module = cache / f"{record['module']}.py"
    os.chmod(cache, 0o777)
    (cache / "__pycache__").mkdir(mode=0o700)
    marker = tmp_path / "planted-pickle-ran"
    index = cache / "__pycache__" / _numba_index_name(module, record["spec"]["entry"])
    index.write_bytes(_planted_pickle(marker))  # planted while the folder was open
    give_to_other_user(index)
    os.chmod(cache, 0o700)
    fresh_process()
    refused(fns, "belongs to another user")
    assert not marker.exists()
    clear()
    fresh_process()
    np.testing.assert_array_equal(sourcead.grad(fns.loss)(X), 2 * X)
    assert not marker.exists()
    assert_only_ours_and_private(cache)


def test_numbas_records_and_every_folder_are_private_whatever_the_umask(tmp_path, fns):
    src, cache = tmp_path / "src", tmp_path / "cache"
    cold = run_child(src, cache, umask=0)
    warm = run_child(src, cache, umask=0)
    assert cold["result"] == warm["result"] == [2.0, 4.0, 6.0]
    assert (warm["hits"], warm["misses"]) == (1, 0)
    assert list((cache / "__pycache__").glob("*.nbc"))
    assert_only_ours_and_private(cache)


def test_numba_cache_dir_is_ignored_for_generated_modules(tmp_path, fns):
    src, cache, numba_dir = tmp_path / "src", tmp_path / "cache", tmp_path / "numba"
    run_child(src, cache, numba_cache_dir=numba_dir)
    assert run_child(src, cache, numba_cache_dir=numba_dir)["hits"] == 1
    assert not numba_dir.exists() or not list(numba_dir.rglob("*sourcead_*"))
    assert list((cache / "__pycache__").glob("sourcead_*.nbi"))


def test_cache_info_says_why_a_folder_is_refused_and_how_to_fix_it(cache, fns):
    sourcead.grad(fns.loss, jit=False)
    os.chmod(cache / "keys", 0o777)
    info = CliRunner().invoke(main, ["cache", "info"])
    assert info.exit_code == 0, info.output
    assert f"refused: {cache / 'keys'}" in info.output and "sourcead cache clear" in info.output
    clear()
    info = CliRunner().invoke(main, ["cache", "info"])
    assert "refused" not in info.output and "key files: 0" in info.output


@needs_root
def test_a_folder_of_another_users_is_neither_cleared_nor_used(cache, fns):
    cache.mkdir(mode=0o700)
    (cache / "sourcead_theirs.py").write_text("x = 1\n")
    give_to_other_user(cache, cache / "sourcead_theirs.py")
    refused(fns, "belongs to another user")
    result = CliRunner().invoke(main, ["cache", "clear"])
    assert result.exit_code == 2 and "Set SOURCEAD_CACHE_DIR" in result.output
    assert (cache / "sourcead_theirs.py").exists()  # theirs: not ours to delete
    info = CliRunner().invoke(main, ["cache", "info"])
    assert "refused" in info.output and "fix: Set SOURCEAD_CACHE_DIR to a folder of your own." in info.output


# --- finding 5: a key file names what it was written for -------------------------------------


def test_a_key_file_copied_over_anothers_is_a_miss_not_the_other_gradient(cache, fns, monkeypatch):
    import sourcead.pipeline.driver as pipeline

    np.testing.assert_array_equal(sourcead.grad(fns.loss, jit=False)(X), 2 * X)
    before = set((cache / "keys").glob("*.json"))
    np.testing.assert_array_equal(sourcead.grad(fns.other, jit=False)(X), [5.0, 5.0, 5.0])
    (other_key,) = set((cache / "keys").glob("*.json")) - before
    (loss_key,) = before
    other_key.write_bytes(loss_key.read_bytes())
    runs = []
    generate = pipeline.generate
    monkeypatch.setattr(pipeline, "generate", lambda *a, **k: runs.append(1) or generate(*a, **k))
    fresh_process()
    np.testing.assert_array_equal(sourcead.grad(fns.other, jit=False)(X), [5.0, 5.0, 5.0])
    assert runs == [1]  # the copied key file read as a miss: the pipeline ran again
    assert other_key.read_bytes() != loss_key.read_bytes()  # and its own key file was written back
    fresh_process()
    np.testing.assert_array_equal(sourcead.grad(fns.other, jit=False)(X), [5.0, 5.0, 5.0])
    assert runs == [1]


def test_a_numba_record_copied_over_anothers_is_compiled_again(cache, fns):
    np.testing.assert_array_equal(sourcead.grad(fns.loss)(X), 2 * X)
    np.testing.assert_array_equal(sourcead.grad(fns.other)(X), [5.0, 5.0, 5.0])
    records = {p.name.split(".")[0]: p for p in (cache / "__pycache__").glob("*.nbc")}
    (loss_data,) = [p for n, p in records.items() if "_loss_" in n]
    (other_data,) = [p for n, p in records.items() if "_other_" in n]
    other_data.write_bytes(loss_data.read_bytes())
    fresh_process()
    g = sourcead.grad(fns.other)
    np.testing.assert_array_equal(g(X), [5.0, 5.0, 5.0])
    stats = g._default.call.stats
    assert (sum(stats.cache_hits.values()), sum(stats.cache_misses.values())) == (0, 1)
