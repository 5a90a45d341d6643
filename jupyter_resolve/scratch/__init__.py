"""Scratch work: per-session workspaces and the scratch kernels that run builtins in them."""
