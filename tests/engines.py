"""The ``engine`` fixture: one :class:`csum.engine.Engine` object per summing engine this installation has.

    def test_something(engine):      # tests/conftest.py makes the fixture available everywhere
        engine.ones_sum(buf, 16, "little")

Tests call the engine's functions directly (MarkupSafe's shape: nothing is
switched at run time); the rest of csum runs on the engine bound at import
(``CSUM_ENGINE``), and tests/engine/test_engine.py runs the public functions under
each ``CSUM_ENGINE`` value in a subprocess.
"""

import pytest

from csum import engine as _engine


@pytest.fixture(params=list(_engine.ENGINES.values()), ids=list(_engine.ENGINES))
def engine(request: pytest.FixtureRequest) -> _engine.Engine:
    return request.param
