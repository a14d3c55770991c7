"""From generated source to a callable: the cache and numba (`compile`), what a call checks
(`callplan`, `arguments`), the explaining rerun (`rerun`), numba's threading layer (`threads`).
"""
