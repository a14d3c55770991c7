"""`sourcead.jax`: the JAX bridge (`sourcead/bridges/jax.py`), at the path users import."""

from .bridges.jax import JaxFunction, function

__all__ = ["JaxFunction", "function"]
