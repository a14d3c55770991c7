"""A property-based differential fuzzer for sourcead: random programs in the documented subset,
their derivatives checked against finite differences, each other and the jit-compiled code.

`python -m fuzz --help` runs it; `fuzz/README.md` says how to read the report.
"""
