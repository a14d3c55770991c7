"""The derivative of one expression (`linearize`), shared by forward and reverse mode."""
