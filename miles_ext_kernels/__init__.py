"""miles-ext-kernels: reproducible, fast normalization kernels for LLM and RL training.

Importing this package does nothing heavy (no torch, no nvcc, no tvm-ffi); the runtime lives
in :mod:`miles_ext_kernels.cake`.
"""

# The single source of the version: pyproject.toml reads it statically
# ([tool.setuptools.dynamic] version = {attr = "miles_ext_kernels.__version__"}), so the
# installed metadata and this attribute cannot disagree, and a source checkout reports the
# right version without being installed.
__version__ = "0.1.0"

__all__ = ["__version__"]
