"""Core-form rewrites that need the analyses: in-place array updates (`inplace`) and `prange` loops
that race in the user's code (`races`).
"""
