"""Shared test setup: hypothesis settings profiles and the engine fixtures (tests/engines.py).

``default`` runs every property with 1,000 examples (what CI runs);
``thorough`` (CSUM_HYPOTHESIS_PROFILE=thorough) runs 20,000; ``engines`` (200) is tools/sanitized.py's, where
each example runs under AddressSanitizer.
"""

import os

from engines import engine, every_engine  # noqa: F401  (fixtures: one per summing engine)
from hypothesis import HealthCheck, settings

#: prints how many cases were checked against the running kernel (tests/kernel/test_kernel.py)
pytest_plugins = ["kernel_count_plugin"]

settings.register_profile("default", max_examples=1000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("engines", max_examples=200, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=20000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("CSUM_HYPOTHESIS_PROFILE", "default"))


def pytest_report_header(config):
    from csum import engine as _engine

    return f"csum engine: {_engine.ENGINE} (of {', '.join(_engine.ENGINES)})"
