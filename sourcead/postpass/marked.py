"""Passes over the text of a generated function, from a marked statement on.

The reverse sweep's last passes (`unsigned.py`, `first_contributions.py`) rewrite the statements of the
finished function after the comment that opens the sweep: they need only its loop headers and
assignments, and every emitter's code gets them without asking. They take and return the parsed
module (`reverse.sweeps.Sweeps.tree`): the sweeps' text is parsed once for all the post-passes,
and printed once after them (parsing and printing were a third of a reverse transform's time).
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

Rewrite = Callable[[list[cst.CSTNode]], list[cst.CSTNode]]


def rewrite_after(module: cst.Module, marker: str, *rewrites: Rewrite) -> cst.Module:
    """`module` (holding one generated function) with the function's statements from the one after
    the comment `marker` on passed through each of `rewrites` in turn; unchanged without the marker."""
    (definition,) = module.body
    assert isinstance(definition, cst.FunctionDef)
    statements = list(definition.body.body)
    start = next((k for k, s in enumerate(statements) if _marked(s, marker)), None)
    if start is None:
        return module
    sweep = statements[start:]
    for rewrite in rewrites:
        sweep = rewrite(sweep)
    definition = definition.with_changes(body=definition.body.with_changes(body=statements[:start] + sweep))
    return module.with_changes(body=[definition])


def _marked(statement: cst.CSTNode, marker: str) -> bool:
    lines = getattr(statement, "leading_lines", ())
    return any(line.comment is not None and line.comment.value == marker for line in lines)
