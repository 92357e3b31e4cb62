"""``csum.prog``: the public path of :mod:`csum.kernel.programs` (its ``__all__``: csum.kernel.prog's, and what
``csum prog`` runs: sample_frames, judge_program, across_kernels)."""

from .kernel.programs import *  # noqa: F403
from .kernel.programs import __all__  # noqa: F401
