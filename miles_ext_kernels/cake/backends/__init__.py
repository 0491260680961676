"""RMSNorm backends: ``reference`` (PyTorch, any device) and ``programs`` (Cake programs)."""
