"""Drop-in integrations: a Hugging Face RMSNorm patch and a Megatron-Core norm module.

Neither transformers nor Megatron is imported: HF modules are recognised by class name and the
Megatron module reads its configuration by attribute.
"""

from miles_ext_kernels.integrations.hf import (
    PatchHandle,
    patch_rmsnorm,
    patched_modules,
    unpatch_rmsnorm,
)
from miles_ext_kernels.integrations.megatron import MegatronRMSNorm
from miles_ext_kernels.integrations.rmsnorm_styles import CONTRACTS, KNOWN_CLASSES

__all__ = [
    "CONTRACTS",
    "KNOWN_CLASSES",
    "MegatronRMSNorm",
    "PatchHandle",
    "patch_rmsnorm",
    "patched_modules",
    "unpatch_rmsnorm",
]
