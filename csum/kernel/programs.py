"""``csum.prog``'s wing module: a user's program on the running kernel (:mod:`csum.kernel.prog`), judged on many
packets as ``csum prog`` judges it (:mod:`csum.kernel.prog_run`) and across kernels (:mod:`csum.kernel.across`).
The CLI (csum/cli/prog.py, prog_kernels.py) calls these same functions and only formats what they return."""

from .across import Across, Target, across_kernels, targets
from .prog import *  # noqa: F403
from .prog import __all__ as _PROG
from .prog_run import Judged, Packets, judge_program, sample_frames

__all__ = [*_PROG, "Across", "Judged", "Packets", "Target", "across_kernels", "judge_program", "sample_frames",
           "targets"]
