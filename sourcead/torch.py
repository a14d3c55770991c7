"""`sourcead.torch`: the PyTorch bridge (`sourcead/bridges/torch.py`), at the path users import."""

from .bridges.torch import TorchFunction, function

__all__ = ["TorchFunction", "function"]
