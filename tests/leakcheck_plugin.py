"""A pytest plugin for the sanitized run (tools/sanitized.py passes ``-p leakcheck_plugin``): LeakSanitizer's check
once the tests are done, in every pytest process (each xdist worker too), while the interpreter is still whole.

The run sets ``leak_check_at_exit=0``: at exit the interpreter's own finalization leaves blocks behind that are
nobody's bug, so the check runs here instead, after a garbage collection, where every object Python still holds
is reachable and a block LeakSanitizer calls leaked is one that no pointer reaches: memory csum's C allocated
and lost (a missing PyMem_Free, an object whose last reference it dropped without a decref; ``PYTHONMALLOC=malloc``
puts every object on the sanitizer's heap). The report goes to the run's ``log_path``, which tools/sanitized.py
reads; without the sanitizer runtime this plugin does nothing.
"""

from __future__ import annotations

import ctypes
import gc


def _check() -> int:
    try:
        check = ctypes.CDLL(None).__lsan_do_recoverable_leak_check
    except AttributeError:  # not under the sanitizer runtime
        return 0
    gc.collect()
    return int(check())


def pytest_sessionfinish(session, exitstatus):
    if _check():
        print("leakcheck_plugin: LeakSanitizer found leaks (report in the sanitizer's log)")
