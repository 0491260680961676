"""miles-ext-kernels: reproducible, fast normalization kernels for LLM and RL training."""

__version__ = "0.1.0"

__all__ = ["__version__"]
