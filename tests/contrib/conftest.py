"""The Gluon layer test helpers of tests/nn (hybrid_check, mxnet_layers) are importable here."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), 'nn'))
