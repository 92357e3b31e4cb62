"""Shared test setup: hypothesis settings profiles and the engine fixtures (tests/engines.py).

``default`` runs every property with 1,000 examples (what CI runs);
``thorough`` (CSUM_HYPOTHESIS_PROFILE=thorough) runs 20,000; ``engines`` (200) is tools/sanitized.py's, where
each example runs under AddressSanitizer.
"""

import compileall
import os
from pathlib import Path

from engines import engine, every_engine  # noqa: F401  (fixtures: one per summing engine)
from hypothesis import HealthCheck, settings
from scapy.config import conf as scapy_conf
from scapy.layers.inet import IP
from scapy.layers.inet6 import IPv6

#: prints how many cases were checked against the running kernel (tests/kernel/test_kernel.py)
pytest_plugins = ["kernel_count_plugin"]

settings.register_profile("default", max_examples=1000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("engines", max_examples=200, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=20000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("CSUM_HYPOTHESIS_PROFILE", "default"))

# scapy fills in the destination MAC of a frame built without one by asking the network for the IP destination's
# (an ARP or NDP request, then 2 s of waiting when no one answers, every time: failures are not cached). Where the
# machine's own subnet is a documentation prefix the tests use (192.0.2.0/24 on this one) each such frame sent a
# request and waited 2 s. No test depends on that MAC (no checksum covers it): every frame gets the broadcast
# address scapy falls back on, without a request on the wire.
for _key in [k for k in scapy_conf.neighbor.resolvers if k[1] in (IP, IPv6)]:
    del scapy_conf.neighbor.resolvers[_key]


def pytest_configure(config):
    """Write the bytecode of csum, bench/ and the ``csum`` script's module once, before the workers start.

    Where PYTHONDONTWRITEBYTECODE is set (this machine), every interpreter the tests start (hundreds: the CLI,
    the documentation's examples, the benches) and every worker compiled each module it imports from source
    again; it now reads the bytecode, as an installed package's user does (about 15 of the 62 CPU seconds of
    tests/cli and the documentation's examples here). Python checks a .pyc against its source's mtime and size
    when it imports it, so an edited module is compiled afresh. Not in an xdist worker: the controller did it.
    """
    if hasattr(config, "workerinput"):
        return
    root = Path(__file__).resolve().parent.parent
    for package in ("csum", "bench"):
        compileall.compile_dir(root / package, quiet=1)
    compileall.compile_file(root / "_csum_cli.py", quiet=1)


def pytest_report_header(config):
    from csum import engine as _engine

    return f"csum engine: {_engine.ENGINE} (of {', '.join(_engine.ENGINES)})"
