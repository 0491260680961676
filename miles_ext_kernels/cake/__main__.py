"""``python -m miles_ext_kernels.cake``: the runtime CLI (build, verify, info)."""

from miles_ext_kernels.cake.cli import cli

if __name__ == "__main__":
    cli(prog_name="python -m miles_ext_kernels.cake")
