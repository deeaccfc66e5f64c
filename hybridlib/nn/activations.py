"""Activation layers: LeakyReLU, PReLU, ELU, SELU, GELU, Swish (being written)."""
__all__ = []
