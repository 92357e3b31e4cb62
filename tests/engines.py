"""The engine fixtures (tests/conftest.py makes them available everywhere).

``engine``: one :class:`csum.engine.Engine` object per summing engine this installation has, for tests of
the engines themselves, which call its functions directly::

    def test_something(engine):
        engine.ones_sum(buf, 16, "little")

``every_engine``: runs a test once per engine, with csum switched to it for the test's duration by
:func:`csum.engine.use` (the summing function, the row sums, the C fast paths and the C walker together,
as if csum had been imported with ``CSUM_ENGINE`` set to it). For tests of public functions whose result
runs through the engine::

    @pytest.mark.usefixtures("every_engine")
    @given(buffers())
    def test_public_function(data): ...

(as ``usefixtures``, hypothesis does not warn about a function-scoped fixture: the engine stays the same for
every example, which is the point). ``CSUM_TEST_ENGINES=c`` (a comma-separated list) runs ``engine`` and
``every_engine`` tests under those engines only: tools/sanitized.py's run, where the other engines run no C.
"""

import os
from collections.abc import Iterator

import pytest

from csum import engine as _engine

_EVERY = [n for n in os.environ.get("CSUM_TEST_ENGINES", ",".join(_engine.ENGINES)).split(",") if n in _engine.ENGINES]


@pytest.fixture(params=[_engine.ENGINES[n] for n in _EVERY], ids=_EVERY)
def engine(request: pytest.FixtureRequest) -> _engine.Engine:
    return request.param


@pytest.fixture(params=_EVERY, ids=[f"engine={name}" for name in _EVERY])
def every_engine(request: pytest.FixtureRequest) -> Iterator[_engine.Engine]:
    with _engine.use(request.param) as bound:
        yield bound
