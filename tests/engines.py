"""The ``engine`` fixture: run a test once per summing engine this installation has (csum/_engine.py).

    def test_something(engine): ...   # tests/conftest.py makes the fixture available everywhere

Inside the test every caller of ``csum._engine.ones_sum`` (and csum.batch) runs on
``engine`` ("c" when the extension is built, "numpy", "python"); the engine chosen
by CSUM_ENGINE is restored afterwards.
"""

import pytest

from csum import _engine


@pytest.fixture(params=_engine.available_engines())
def engine(request: pytest.FixtureRequest):
    previous = _engine.use_engine(request.param)
    try:
        yield request.param
    finally:
        _engine.use_engine(previous)
