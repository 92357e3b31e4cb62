"""csum.rewrite's names are bound on first use (csum/rewrite/__init__.py), so that ``csum rewrite`` of a capture the
C engine takes whole starts without the one-packet editor (tests/test_startup.py checks what it imports): the lazy
names must be exactly the modules' public ones."""

import importlib

import csum.rewrite


def test_lazy_names_are_the_modules_public_names():
    """Every name csum.rewrite binds on first use is its module's ``__all__`` and every public name of .packet is
    one of them (the expected lists are the modules' own ``__all__``, not csum.rewrite's table)."""
    lazy = csum.rewrite._LAZY
    for module in set(lazy.values()):
        public = set(importlib.import_module(f"csum.rewrite.{module}").__all__)
        assert {n for n, m in lazy.items() if m == module} == public, module
    assert set(csum.rewrite.__all__) == set(lazy) | {"Rules"}


def test_lazy_name_is_the_module_attribute():
    """``csum.rewrite.rewrite`` is csum.rewrite.packet.rewrite; an unknown name is an AttributeError."""
    from csum.rewrite import packet

    assert csum.rewrite.rewrite is packet.rewrite
    try:
        csum.rewrite.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("no AttributeError")
