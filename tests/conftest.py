"""Test configuration: the operator harness is importable as ``harness`` from tests/ops, and the
Python processes that tests start import this checkout's hybridlib, installed or not."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'ops'))
os.environ['PYTHONPATH'] = os.pathsep.join(
    p for p in (ROOT, os.environ.get('PYTHONPATH')) if p)
