"""The code of the two sweeps: the forward sweep with its records, the reverse sweep, and the
checkpointed and gathered loops in both.
"""
