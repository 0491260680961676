"""miles-ext-kernels' deterministic RMSNorm training kernels in the Cake package format."""
