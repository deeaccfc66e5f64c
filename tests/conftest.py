"""Test configuration: the operator harness is importable as ``harness`` from tests/ops."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'ops'))
