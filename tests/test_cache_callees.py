"""The cache key covers inlined callees: editing a callee in another module gives new code."""

from __future__ import annotations

import importlib

import sourcead
from sourcead.build.keys import source_key


def test_editing_a_callee_in_another_module_changes_the_derivative(tmp_path, monkeypatch):
    (tmp_path / "callee_mod.py").write_text("def helper(x):\n    return 2.0 * x\n")
    (tmp_path / "caller_mod.py").write_text("import callee_mod\n\n\ndef f(x):\n    return callee_mod.helper(x) + x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import callee_mod
    import caller_mod

    before = source_key(caller_mod.f, "reverse", ("x",), None, {})
    assert sourcead.grad(caller_mod.f, jit=False)(1.0) == 3.0
    (tmp_path / "callee_mod.py").write_text("def helper(x):\n    return 5.0 * x * x\n")
    importlib.reload(callee_mod)
    after = source_key(caller_mod.f, "reverse", ("x",), None, {})
    assert before != after
    assert sourcead.grad(caller_mod.f, jit=False)(1.0) == 11.0
