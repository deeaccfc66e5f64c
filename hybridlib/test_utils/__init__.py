"""Tools for testing code written for MXNet (``mx.test_utils``), as MXNet 1.9.1 defines them.

- ``tolerances``: the default context and dtype of test data, and MXNet's default tolerances
  per dtype (``default_rtols``/``default_atols``, ``get_tols``);
- ``arrays``: test data drawn from numpy's global generator, so that ``np.random.seed`` makes it
  repeatable (``rand_shape_nd``, ``random_arrays``, ``rand_ndarray``, ...), special matrices and
  numpy references;
- ``compare``: ``assert_almost_equal`` and friends, with MXNet's error message, which names the
  location of the largest violation;
- ``symbolic``: gradient and output checks that run Symbols through ``bind``/``simple_bind``
  (``check_numeric_gradient``, ``check_symbolic_forward``/``backward``, ``check_speed``);
- ``consistency``: one computation in several settings (``check_consistency`` over contexts
  and dtypes, ``check_gluon_hybridize_consistency`` for Gluon blocks imperatively and
  hybridized, ``compare_optimizer``);
- ``statistics``: statistical checks of random generators (``chi_square_check``,
  ``mean_check``, ...);
- ``env``: environment variables, stderr, retries and the machine (``environment``, ``retry``,
  ``list_gpus``, ...);
- ``datasets``: the downloads of MXNet's examples and tests (``get_mnist``, ``download``, ...).

Every public name is exported here, as MXNet's single ``test_utils`` module has them.
Arrays are dense in hybridlib: the helpers that build sparse arrays raise ``NotSupportedError``.
"""
from . import tolerances, arrays, compare, symbolic, consistency, statistics, env, datasets
from .tolerances import *       # noqa: F401,F403
from .arrays import *           # noqa: F401,F403
from .compare import *          # noqa: F401,F403
from .symbolic import *         # noqa: F401,F403
from .consistency import *      # noqa: F401,F403
from .statistics import *       # noqa: F401,F403
from .env import *              # noqa: F401,F403
from .datasets import *         # noqa: F401,F403
# private names that tests reach through the package: the chi-square internals, the table of
# models, and the module whose ``download`` a test replaces with a local fake
from .statistics import _chisquare, _upper_regularized_gamma    # noqa: F401
from .datasets import _DEFAULT_MODEL_INFO, _utils               # noqa: F401

__all__ = sorted(tolerances.__all__ + arrays.__all__ + compare.__all__ + symbolic.__all__
                 + consistency.__all__ + statistics.__all__ + env.__all__ + datasets.__all__)
