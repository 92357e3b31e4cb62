"""The running kernel and real kernels of other architectures: the checksum helpers called through
BPF_PROG_TEST_RUN (:mod:`.live`), the emulation judged against them (:mod:`.check`), users' own BPF objects
(:mod:`.prog`, on :mod:`.libbpf`, :mod:`.syscall` and :mod:`.insn`) and Debian's kernels booted under QEMU
(:mod:`.qemu`).

``csum.kernel`` is :mod:`.live`'s public names.
"""

from .live import *  # noqa: F403
from .live import __all__  # noqa: F401
