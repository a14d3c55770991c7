"""The public transforms (`transforms`), batches of directions (`batch`), `.njit` dispatchers
(`njit`), pickling (`pickling`), `check_derivative` (`check`) and `memory=` (`budget`).
"""
