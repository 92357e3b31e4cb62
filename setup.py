"""Build the optional C extensions of csum.engine: _speedups (summing), _cwalk (the capture checker's fast
checker, with the protocol table generated from csum/layers/table.py: csum/engine/_cwalk_table.h) and _rewrite
(csum rewrite's fast path, with the same generated table) and _explain (csum/explain's hypotheses), these three
linked with the one C walker csum/engine/_walk.c, each linked with the arithmetic csum/engine/_arith.c;
all metadata lives in pyproject.toml.

``optional=True``: without a C compiler the extensions are skipped and csum runs on its numpy / pure-Python
engines and its Python walker (csum/engine/__init__.py).

Build switches (docs/reliability.md): ``CSUM_SANITIZE=address,undefined`` builds both extensions with those
sanitizers (any ``-fsanitize=`` list: ``address,undefined,fuzzer-no-link`` with ``CC=clang`` for the fuzz targets
of fuzz/); every finding is fatal (``-fno-sanitize-recover=all``), and the Python process needs the sanitizer
runtime preloaded (tools/sanitized.py does it). ``CSUM_COVERAGE=1`` (``CC=clang``) adds llvm's source-based
coverage (fuzz/coverage.py).
"""

import os

from setuptools import Extension, setup


def _flags() -> tuple[list[str], list[str]]:
    """(compile, link) flags of CSUM_SANITIZE and CSUM_COVERAGE."""
    cflags, ldflags = [], []
    sanitize = os.environ.get("CSUM_SANITIZE", "").strip()
    if sanitize:
        cflags += [f"-fsanitize={sanitize}", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", "-g", "-O1"]
        ldflags.append(f"-fsanitize={sanitize}")
    if os.environ.get("CSUM_COVERAGE", "") not in ("", "0"):
        cflags += ["-fprofile-instr-generate", "-fcoverage-mapping", "-g", "-O0"]
        ldflags.append("-fprofile-instr-generate")
    return cflags, ldflags


_CFLAGS, _LDFLAGS = _flags()
#: The arithmetic (csum/engine/_arith.c/.h): linked into every extension, the only C that folds or sums.
_ARITH = ["csum/engine/_arith.c"]
#: The walker (csum/engine/_walk.c/.h): linked into the checker, the rewriter and the explainer, the only C that walks
#: a packet.
_WALK = ["csum/engine/_walk.c"]
_WALK_DEPENDS = ["csum/engine/_walk.h", "csum/engine/_arith.h", "csum/engine/_cwalk_table.h", "csum/engine/_ipheaders.h",
                 "csum/engine/_encap.h"]
setup(ext_modules=[Extension("csum.engine._speedups", sources=["csum/engine/_speedups.c", *_ARITH],
                             depends=["csum/engine/_arith.h"], optional=True,
                             extra_compile_args=_CFLAGS, extra_link_args=_LDFLAGS),
                   Extension("csum.engine._cwalk", sources=["csum/engine/_cwalk.c", "csum/engine/_rowtext.c", *_WALK,
                                                          *_ARITH],
                             depends=[*_WALK_DEPENDS, "csum/engine/_rows.h"],
                             optional=True, extra_compile_args=_CFLAGS, extra_link_args=_LDFLAGS),
                   Extension("csum.engine._explain", sources=["csum/engine/_explain.c", *_WALK, *_ARITH],
                             depends=_WALK_DEPENDS, optional=True,
                             extra_compile_args=_CFLAGS, extra_link_args=_LDFLAGS),
                   Extension("csum.engine._rewrite", sources=["csum/engine/_rewrite.c", *_WALK, *_ARITH],
                             depends=_WALK_DEPENDS,
                             optional=True,
                             extra_compile_args=_CFLAGS, extra_link_args=_LDFLAGS)])
