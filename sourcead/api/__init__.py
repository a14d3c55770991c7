"""The public API, lowest module first: what a prepared object tells the rest (`protocol`), `memory=`
(`budget`), pickling (`pickling`), `.njit` entries (`njit`) and batch loops (`batch`), argument
checks (`callargs`), the prepared derivative (`prepared`), vector mode (`vector_cache`) and batches
of directions (`directions`), the transforms (`first_order`, `higher`), `@differentiable`
(`decorator`) and `check_derivative` (`check`).
"""
