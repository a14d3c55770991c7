"""Framework bridges: what they share (`common`), PyTorch (`torch`), JAX (`jax`)."""
