"""Test configuration: the operator harness is importable as ``harness`` from tests/ops, the
Python processes that tests start import this checkout's hybridlib, installed or not, and the
convolution engines' timed choices are not written to the data folder."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'ops'))
# the engines' timed choices stay in each test process (tests of the file set their own)
os.environ.setdefault('HYBRIDLIB_TUNE_FILE', '')
os.environ['PYTHONPATH'] = os.pathsep.join(
    p for p in (ROOT, os.environ.get('PYTHONPATH')) if p)
