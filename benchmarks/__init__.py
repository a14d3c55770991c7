"""sourcead's benchmarks (`make bench`; benchmarks/README.md).

An installed sourcead has its bytecode; a checkout run with PYTHONDONTWRITEBYTECODE=1 (as on the
machines here) has none, and a first call, which imports the pipeline lazily, compiled sourcead's
modules inside the timed region (about 0.2 s). Compile it once here, as pip does on install.
"""

import compileall
from pathlib import Path

compileall.compile_dir(str(Path(__file__).resolve().parents[1] / "sourcead"), quiet=2)  # a read-only tree: silent
