"""Tests of hybridlib/contrib (a package, so that test_nn.py does not clash with
tests/ops/test_nn.py)."""
