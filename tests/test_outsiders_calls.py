"""Issue 38, odd calls: the API's answers to calls that outsiders found silently wrong, refused
late, or failing for reasons that have nothing to do with the derivative (an interrupt, a full
disk, a crafted pickle). Programs under test: `outsiders_calls.py` (and the zoo entries made of them).
"""

from __future__ import annotations

import errno
import importlib.util
import os
import pickle
import signal
import time
import warnings
from pathlib import Path

import numpy as np
import outsiders_calls as oc
import pytest

import sourcead
from sourcead import AliasingError, ArgumentTypeError, SourceADError
from sourcead.api.higher import _rebuild_second_order
from sourcead.api.pickling import function_ref, rebuild, rebuild_differentiable
from sourcead.bridges.common import check_options
from sourcead.build import cache_writes, rerun
from sourcead.build import compile as compile_pass

X = np.array([0.5, -1.0, 2.0, 0.25])
W = np.array([1.5, 0.5, 2.0, 1.0])
each_jit = pytest.mark.parametrize("jit", [False, True], ids=["python", "jit"])


# --- finding 2: out= that overlaps itself -----------------------------------------------------------


@each_jit
@pytest.mark.parametrize("stride", [0, 4], ids=["zero_stride", "half_an_element"])
def test_out_that_overlaps_itself_is_an_aliasing_error(jit, stride):
    base = np.zeros(8)
    out = np.lib.stride_tricks.as_strided(base, (4,), (stride,))  # several elements in one place
    g = sourcead.grad(oc.weighted_squares, jit=jit)
    with pytest.raises(AliasingError, match=r"out= for `x` overlaps itself \(strides"):
        g(X, W, out=out)
    assert not base.any()  # nothing written


def test_out_that_overlaps_itself_in_two_dimensions_is_refused_too():
    base = np.zeros(8)
    out = np.lib.stride_tricks.as_strided(base, (2, 2), (8, 8))  # out[0, 1] is out[1, 0]
    g = sourcead.grad(oc.matrix_squares, jit=False)
    with pytest.raises(AliasingError, match="overlaps itself"):
        g(X.reshape(2, 2), out=out)
    assert not base.any()


# --- finding 9: interrupts propagate; the explaining run is bounded ---------------------------------


def test_an_interrupt_out_of_the_generated_code_propagates_and_is_never_explained():
    # numba hands Ctrl-C back as a SystemError whose cause is the KeyboardInterrupt; the error
    # path used to run the user's function again in Python to explain it
    oc.RERUNS.clear()
    g = sourcead.grad(oc.rule_then_interrupt, jit=False)
    with pytest.raises(KeyboardInterrupt):
        g(X)
    assert oc.RERUNS == []  # the explaining run did not happen


def test_the_explaining_run_is_stopped_at_its_budget(monkeypatch):
    monkeypatch.setattr(rerun, "SECONDS", 0.2)
    g = sourcead.grad(oc.rule_then_slow, jit=False)  # the gradient fails at once, in the partials
    start = time.monotonic()
    with pytest.raises(SourceADError, match=r"failed \(ValueError: the partials fail\).*stopped after 0\.2 s") as info:
        g(X, 10**12)  # in Python, the count loop would run for hours
    assert time.monotonic() - start < 30.0
    assert "Call rule_then_slow in Python with these arguments" in str(info.value)


def test_the_explaining_run_leaves_a_debugger_s_trace_in_place():
    import sys

    def tracer(frame, event, arg):
        return None

    sys.settrace(tracer)
    try:
        assert rerun.bounded(oc.weighted_squares, [X, W]) == oc.weighted_squares(X, W)
        assert sys.gettrace() is tracer
    finally:
        sys.settrace(None)


def test_ctrl_c_during_compiled_code_is_a_keyboard_interrupt():
    g = sourcead.grad(oc.slow_sines)
    x = np.linspace(0.0, 1.0, 1000)
    g(x, 10)  # compiled before the clock starts

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        start = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            signal.setitimer(signal.ITIMER_REAL, 0.2)
            g(x, 100_000)  # about a second compiled; in Python, the explaining run took minutes
            time.sleep(10.0)  # an interrupt that arrives after the call still ends here
        assert time.monotonic() - start < 60.0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# --- finding 10: the cache folder cannot be written -------------------------------------------------


@pytest.fixture
def fresh(monkeypatch):
    """As in a new process: nothing loaded, nothing warned about yet."""
    monkeypatch.setattr(compile_pass, "_LOADED", {})
    monkeypatch.setattr(cache_writes, "_WARNED", [])


def _cache_warnings(record) -> list:
    return [w for w in record if issubclass(w.category, cache_writes.CacheWarning)]


@each_jit
def test_a_cache_folder_that_cannot_be_made_compiles_in_memory_with_one_warning(tmp_path, monkeypatch, fresh, jit):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("SOURCEAD_CACHE_DIR", str(blocker / "cache"))  # mkdir: Not a directory
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        g = sourcead.grad(oc.weighted_squares, jit=jit)
        v = sourcead.vjp(oc.weighted_squares, jit=jit)
        np.testing.assert_allclose(g(X, W), 2.0 * W * X - 0.5 * W, rtol=1e-14)
        np.testing.assert_allclose(v(X, W, cotangent=2.0)[1], 2.0 * (2.0 * W * X - 0.5 * W), rtol=1e-14)
    (warning,) = _cache_warnings(record)
    assert "cannot write to the cache folder" in str(warning.message)
    assert warning.filename == __file__  # the warning points at the call
    assert "Not a directory" in str(warning.message)


def test_a_generated_module_in_memory_still_shows_its_lines(tmp_path, monkeypatch, fresh):
    import linecache

    monkeypatch.setenv("SOURCEAD_CACHE_DIR", str(tmp_path / "a_file" / "cache"))
    (tmp_path / "a_file").write_text("")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cache_writes.CacheWarning)
        g = sourcead.grad(oc.weighted_squares, jit=False)
    path = str(g._default.compiled.path)
    assert not os.path.exists(path)
    assert "def weighted_squares_grad(" in "".join(linecache.getlines(path))


def _failing_writes(monkeypatch, folder: Path, code: int) -> None:
    """Writes into `folder` fail as a full disk (after part of the bytes) or a read-only one."""
    real_open, real_write = os.open, os.write

    def inside(fd: int) -> bool:
        return os.readlink(f"/proc/self/fd/{fd}").startswith(str(folder))

    def full_write(fd, data):
        if inside(fd):
            real_write(fd, bytes(data[: len(data) // 2]))
            raise OSError(code, os.strerror(code))
        return real_write(fd, data)

    def read_only_open(path, flags, *args, **kwargs):
        if flags & os.O_CREAT and str(path).startswith(str(folder)):
            raise OSError(code, os.strerror(code), str(path))
        return real_open(path, flags, *args, **kwargs)

    if code == errno.ENOSPC:
        monkeypatch.setattr(os, "write", full_write)
    else:
        monkeypatch.setattr(os, "open", read_only_open)


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES], ids=["full", "read_only", "no_access"])
def test_a_folder_that_cannot_be_written_leaves_no_partial_file(tmp_path, monkeypatch, fresh, code):
    folder = tmp_path / "cache"
    monkeypatch.setenv("SOURCEAD_CACHE_DIR", str(folder))
    _failing_writes(monkeypatch, folder, code)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        g = sourcead.grad(oc.weighted_squares)  # jit: numba's records are written (and fail) too
        np.testing.assert_allclose(g(X, W), 2.0 * W * X - 0.5 * W, rtol=1e-14)
    (warning,) = _cache_warnings(record)
    assert os.strerror(code) in str(warning.message)
    assert [p for p in folder.rglob("*") if p.is_file()] == []  # neither a part nor a temporary file


def test_numbas_own_cache_that_cannot_be_saved_does_not_fail_check_derivative(tmp_path, monkeypatch, fresh):
    # check_derivative compiles the user's primal with numba's own cache=True, beside the user's file
    user = tmp_path / "user"
    user.mkdir()
    (user / "user_loss.py").write_text("def loss(x):\n    return (x[0] * x[1]) ** 2 + x[1]\n")
    spec = importlib.util.spec_from_file_location("user_loss", user / "user_loss.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    real_replace = os.replace

    def full_replace(src, dst, *args, **kwargs):
        if str(dst).startswith(str(user)):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", full_replace)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        report = sourcead.check_derivative(module.loss, np.array([0.5, 2.0]))
    assert report.ok, report
    assert len(_cache_warnings(record)) == 1
    assert not [p for p in (user / "__pycache__").glob("*") if p.suffix in (".nbi", ".nbc")]


# --- finding 11: byte order and 0-d values ----------------------------------------------------------


@each_jit
def test_big_endian_arrays_are_read_in_native_order(jit):
    idx = np.array([3, 0, 3, 1], dtype=">i8")
    g = sourcead.grad(oc.gather_squares, jit=jit)
    np.testing.assert_array_equal(g(X, idx), g(X, idx.astype(np.int64)))
    gx = sourcead.grad(oc.weighted_squares, jit=jit)
    np.testing.assert_array_equal(gx(X.astype(">f8"), W.astype(">f8")), gx(X, W))


@each_jit
def test_a_0d_cotangent_for_a_float_result_is_its_float(jit):
    v = sourcead.vjp(oc.running_product, jit=jit)
    value, grad = v(X, cotangent=np.array(1.5))
    expected_value, expected = v(X, cotangent=1.5)
    assert type(value) is float and value == expected_value
    np.testing.assert_array_equal(grad, expected)


def test_a_0d_tangent_for_a_float_argument_is_its_float():
    j = sourcead.jvp(oc.scaled_sum, wrt=0, jit=False)
    assert j(2.0, X, tangents=np.array(1.5)) == j(2.0, X, tangents=1.5)


# --- finding 12: crafted pickles, jit= --------------------------------------------------------------


REF = function_ref(oc.weighted_squares)


class Crafted:
    """A pickle that names a sourcead loader with the given arguments, as an attacker or a typo may."""

    def __init__(self, loader, *args):
        self.loader, self.args = loader, args

    def __reduce__(self):
        return self.loader, self.args


@pytest.mark.parametrize(
    "loader, args, message",
    [
        (rebuild, ("no_such_transform", REF, 0, True, None), "unknown transform 'no_such_transform'"),
        (rebuild, ("grad", REF, {"x": 1}, True, None), r"wrt=\{'x': 1\} is not a position"),
        (rebuild, ("grad", REF, 0, "yes", None), "jit='yes' is not True or False"),
        (rebuild, ("grad", REF, 0, True, {}), r"memory=\{\} is not a size"),
        (rebuild, ("grad", ("module",), 0, True, None), "the function reference"),
        (rebuild, ("grad", ("object", 3), 0, True, None), "3 is not a function"),
        (_rebuild_second_order, ("no_such", REF, (0, True, None)), "unknown transform 'no_such'"),
        (_rebuild_second_order, ("hvp", REF, {"wrt": 0}), "the options of hvp"),
        (_rebuild_second_order, ("hessian", REF, ({0}, True, None)), r"wrt=\{0\}"),
        (rebuild_differentiable, (("main", 1, 2),), r"the function reference \(.main., 1, 2\) names no module"),
        (check_options, (REF, 0, ["jit"]), r"the options \['jit'\] are not keyword arguments"),
    ],
)
def test_a_crafted_pickle_is_a_clear_error(loader, args, message):
    data = pickle.dumps(Crafted(loader, *args))
    with pytest.raises(SourceADError, match=f"cannot unpickle a sourcead derivative: {message}"):
        pickle.loads(data)


def test_a_sound_pickle_still_loads():
    g = pickle.loads(pickle.dumps(sourcead.grad(oc.weighted_squares, jit=False)))
    np.testing.assert_array_equal(g(X, W), sourcead.grad(oc.weighted_squares, jit=False)(X, W))
    jac = pickle.loads(pickle.dumps(sourcead.jacobian(oc.running_product, wrt=[0], jit=False, memory="1MB")))
    np.testing.assert_array_equal(jac(X)[0], sourcead.grad(oc.running_product, jit=False)(X))


@pytest.mark.parametrize(
    "make",
    [
        lambda f: sourcead.grad(f, jit="yes"),
        lambda f: sourcead.vjp(f, jit=1),
        lambda f: sourcead.jacobian(f, jit="no"),
        lambda f: sourcead.hessian(f, jit=None),
        lambda f: sourcead.differentiable(f).grad(jit="yes"),
    ],
    ids=["grad", "vjp", "jacobian", "hessian", "differentiable"],
)
def test_jit_must_be_a_bool(make):
    with pytest.raises(SourceADError, match="jit= must be True or False"):
        make(oc.weighted_squares)


# --- finding 13: subclasses, batches, float32 -------------------------------------------------------


class Tagged(np.ndarray):
    """Adds an attribute and a method of its own; overrides nothing of ndarray's."""

    def __array_finalize__(self, obj):
        self.units = getattr(obj, "units", "m")

    def describe(self):
        return f"{self.size} values in {self.units}"


class Doubled(np.ndarray):
    """Overrides an operator: the user's function would compute something else."""

    def __mul__(self, other):
        return np.multiply(self, other) * 2.0


@each_jit
@pytest.mark.parametrize(
    "make, name",
    [
        (lambda a: np.ma.masked_array(a, mask=[0, 1, 0, 0]), "numpy.ma.MaskedArray"),
        (lambda a: a.view(Doubled), "Doubled"),
    ],
    ids=["masked", "operator"],
)
def test_ndarray_subclasses_with_a_meaning_of_their_own_are_refused(jit, make, name):
    g = sourcead.grad(oc.weighted_squares, jit=jit)
    with pytest.raises(ArgumentTypeError, match=f"argument `w` of weighted_squares is a .*{name}"):
        g(X, make(W))
    with pytest.raises(ArgumentTypeError, match=f"argument `x` of weighted_squares is a .*{name}"):
        g(make(X), W)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_np_matrix_is_refused():
    g = sourcead.grad(oc.matrix_squares, jit=False)
    with pytest.raises(ArgumentTypeError, match="numpy.matrix"):
        g(np.matrix(X.reshape(2, 2)))


def test_a_masked_tangent_or_cotangent_is_refused():
    with pytest.raises(ArgumentTypeError, match="MaskedArray"):
        sourcead.jvp(oc.weighted_squares, jit=False)(X, W, tangents=np.ma.masked_array(W, mask=[0, 1, 0, 0]))
    with pytest.raises(ArgumentTypeError, match="MaskedArray"):
        sourcead.vjp(oc.matrix_squares, jit=False)(np.ones((2, 2)), cotangent=np.ma.masked_array(1.0, mask=True))


@each_jit
def test_subclasses_that_only_store_are_read_as_their_data(jit, tmp_path):
    g = sourcead.grad(oc.weighted_squares, jit=jit)
    tagged = g(X.view(Tagged), W.view(Tagged))
    assert type(tagged) is np.ndarray
    np.testing.assert_array_equal(tagged, g(X, W))
    mapped = np.memmap(tmp_path / "w.bin", dtype=np.float64, mode="w+", shape=W.shape)
    mapped[:] = W
    np.testing.assert_array_equal(g(X, mapped), g(X, W))


def test_a_batch_of_tangents_for_a_function_that_writes_is_refused():
    # the batch returned the result's tangents and dropped those of the written array
    j = sourcead.jvp(oc.writes_first, wrt=1, jit=False)
    (value, written), (dot, written_dot) = j(X.copy(), 2.0, tangents=1.0)
    with pytest.raises(SourceADError, match="a batch of tangents: writes_first writes into x"):
        j(X.copy(), 2.0, tangents=np.array([1.0, 2.0]))
    jac = sourcead.jacobian(oc.writes_first, wrt=1, mode="forward", jit=False)(X.copy(), 2.0)
    assert jac == pytest.approx(dot)  # the Jacobian of the result still runs on batches


@pytest.mark.parametrize(
    "call",
    [
        lambda: sourcead.jvp(oc.scaled_sum, wrt=0, jit=False)(2.0, X, tangents=np.array([1.0 + 1.0j, 2.0])),
        lambda: sourcead.hvp(oc.scaled_sum, wrt=1, jit=False)(2.0, X, tangents=X * 1j),
        lambda: sourcead.vjp(oc.running_product, jit=False)(X, cotangent=np.array([1.0 + 1.0j, 2.0])),
    ],
    ids=["jvp", "hvp", "vjp"],
)
def test_complex_directions_in_a_batch_are_refused_not_cast(call):
    with pytest.raises(ArgumentTypeError, match="is complex"):
        call()


@each_jit
def test_a_float32_array_not_differentiated_is_read_as_float64(jit):
    g = sourcead.grad(oc.weighted_squares, jit=jit)
    w32 = W.astype(np.float32) / 3.0
    np.testing.assert_allclose(g(X, w32), g(X, w32.astype(np.float64)), rtol=0, atol=0)
    with pytest.raises(ArgumentTypeError, match="`x`.* a float32 array"):
        g(X.astype(np.float32), W)
