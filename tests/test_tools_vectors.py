"""tools/vectors/make_vectors.py: committed csum_partial and bpf_csum_diff vectors regenerate bit for bit.

Needs a kernel source tree outside the repository (CSUM_KSRC, e.g. /tmp/ksrc holding
lib/checksum.c, arch/x86/lib/csum-partial_64.c, arch/arm64/lib/csum.c, arch/loongarch/lib/csum.c, arch/alpha/lib/checksum.c;
CSUM_KSRC_5_16 one with
the v5.16-era arch/x86/lib/csum-partial_64.c; CSUM_KSRC_LEGACY one with the legacy
net/core/filter.c, plus net/core/filter.c in CSUM_KSRC) and, for generic-be,
s390x-linux-gnu-gcc and qemu-s390x; skipped with the reason otherwise. The expected values are
the committed files, themselves the output of that kernel code.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TOOL = REPO / "tools" / "vectors" / "make_vectors.py"
TOOLS = {"generic": ["gcc"], "x86_64": ["gcc"], "arm64": ["gcc"], "loongarch64": ["gcc"], "alpha": ["gcc"],
         "generic-be": ["s390x-linux-gnu-gcc", "qemu-s390x"], "x86_64@5.16": ["gcc"],
         "generic-homogenized": ["gcc"], "x86_64-homogenized": ["gcc"], "generic-legacy": ["gcc"],
         "x86_64-legacy": ["gcc"]}
#: Trees: CSUM_KSRC (current files), CSUM_KSRC_5_16 (the v5.16-era x86 file), CSUM_KSRC_LEGACY (the
#: pre-6.13 net/core/filter.c beside current lib/ and arch/ files).
KSRC = {name: os.environ.get("CSUM_KSRC_5_16" if name.endswith("@5.16") else
                             "CSUM_KSRC_LEGACY" if name.endswith("-legacy") else "CSUM_KSRC") for name in TOOLS}


@pytest.mark.parametrize("target", sorted(TOOLS))
def test_committed_vectors_regenerate_bit_for_bit(target):
    """make_vectors.py TARGET --check: every case line of tests/vectors/csum_partial/TARGET.txt again."""
    if not KSRC[target]:
        pytest.skip("CSUM_KSRC / _5_16 / _LEGACY (a kernel source tree outside the repository) is not set")
    missing = [tool for tool in TOOLS[target] if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")
    run = subprocess.run([sys.executable, str(TOOL), target, "--ksrc", KSRC[target], "--check"], capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "regenerated bit for bit" in run.stdout


def test_every_committed_file_gives_its_inputs_back():
    """The inputs the tool feeds a harness are the committed files' align/seed/data columns, in order."""
    sys.path.insert(0, str(TOOL.parent))
    try:
        import make_vectors
    finally:
        sys.path.pop(0)
    for name, target in make_vectors.TARGETS.items():
        path = REPO / "tests" / "vectors" / target.family / f"{name}.txt"
        cases = make_vectors.read_inputs(path)
        lines = [line.split() for line in path.read_text().splitlines() if not line.startswith("#")]
        inputs = [f"{s} {f} {t}" for s, _, f, t in lines] if target.excerpt else [f"{a} {s} {d}" for a, s, _, d in lines]
        assert cases == inputs and len(cases) > 1900
        assert f"make_vectors.py {name} " in path.read_text().split("\n# columns")[0]
