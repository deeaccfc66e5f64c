"""Concurrent, HybridConcurrent, Identity (being written)."""
__all__ = []
