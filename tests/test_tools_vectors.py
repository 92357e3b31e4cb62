"""tools/vectors/make_vectors.py: the committed csum_partial, bpf_csum_diff, primitives and helpers vectors
regenerate bit for bit.

One check per target (make_vectors.TARGETS). Each needs a kernel source tree outside the
repository (docs/evidence.md, "Regenerating the vectors"; e.g. Debian's linux-source-X packages extracted
into directories named after the .deb):
  CSUM_KSRC          a tree from v6.13 on (homogenized net/core/filter.c; Linux 7.2)
  CSUM_KSRC_LEGACY   a tree up to v6.12 with the current arch files (legacy filter.c, parisc; Linux 6.12)
  CSUM_KSRC_6_1      a tree from v5.17 to v6.6 (the x86_64@6.6 csum_partial; Linux 6.1)
  CSUM_KSRC_5_10     a tree up to v5.16 (the x86_64@5.16 csum_partial; Linux 5.10)
plus the target's compiler and qemu-user (CSUM_QEMU_DIR: a directory of newer qemu-* binaries to
use instead of those on PATH; s390x needs qemu >= 10). Without them each check skips with the
reason, so CI (which has none) spends no time here. The expected values are the committed files,
themselves the output of that kernel code.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TOOL = REPO / "tools" / "vectors" / "make_vectors.py"
sys.path.insert(0, str(TOOL.parent))
try:
    import make_vectors
finally:
    sys.path.pop(0)

#: Files whose header cannot name a packaged release: arch/parisc/lib/checksum.c is gone by the first Debian
#: linux-source with the homogenized filter.c (7.2), and 6.12 still has the legacy one; the target runs on a
#: v6.13..v7.1 tree, the header keeps the mainline commit the numbers came from.
UNNAMED = {"parisc-homogenized"}


def tree_variable(name: str) -> str:
    """The environment variable naming the kernel tree a target is checked against."""
    if name.startswith("x86_64@6.6"):
        return "CSUM_KSRC_6_1"
    if name.startswith("x86_64@5.16"):
        return "CSUM_KSRC_5_10"
    if name.endswith("-legacy") or name == "parisc":
        return "CSUM_KSRC_LEGACY"
    return "CSUM_KSRC"


@pytest.mark.parametrize("name", sorted(make_vectors.TARGETS))
def test_committed_vectors_regenerate_bit_for_bit(name):
    """make_vectors.py NAME --check: every case line of the committed file (make_vectors.committed_file) again."""
    target = make_vectors.TARGETS[name]
    variable = tree_variable(name)
    ksrc = os.environ.get(variable)
    if not ksrc:
        pytest.skip(f"{variable} (a kernel source tree outside the repository: {target.needs}) is not set")
    if shutil.which(target.cc) is None:
        pytest.skip(f"not installed: {target.cc}")
    newer = target.qemu and Path(os.environ.get("CSUM_QEMU_DIR", "/nonexistent"), target.qemu)
    qemu = str(newer) if newer and newer.is_file() else target.qemu
    problem = make_vectors.qemu_problem(target, qemu)
    if problem:
        pytest.skip(problem)
    missing = [path for path in target.sources if not (Path(ksrc) / path).is_file()]
    if missing:
        pytest.skip(f"{variable}={ksrc} has no {', '.join(missing)} ({target.needs})")
    argv = [sys.executable, str(TOOL), name, "--ksrc", ksrc, "--check"] + (["--qemu", qemu] if qemu else [])
    run = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "regenerated bit for bit" in run.stdout


def test_every_committed_file_has_a_target():
    """Every vector file but the guests' answers (qemu/: csum kernel-check; qemu-prog/: csum prog --debian) and the
    selftest's is a target's output, and vice versa."""
    vectors = REPO / "tests" / "vectors"
    committed = {path for path in vectors.glob("*/*.txt") if path.parent.name not in ("qemu", "qemu-prog")}
    made = {make_vectors.committed_file(name) for name in make_vectors.TARGETS}
    assert made == committed
    assert {path.parent.name for path in made} == {"csum_partial", "bpf_csum_diff", "primitives", "helpers"}


def test_every_committed_file_gives_its_inputs_back():
    """The inputs the tool feeds a harness are the committed files' input columns, in order; headers name the command."""
    for name, target in make_vectors.TARGETS.items():
        path = make_vectors.committed_file(name)
        cases = make_vectors.read_inputs(path)
        lines = [line.split() for line in path.read_text().splitlines() if not line.startswith("#")]
        if target.inline:  # the result is third (csum_fold, csum_from32to16, ip_fast_csum) or last
            inputs = [" ".join(f[:2] + f[3:] if len(f) < 7 else f[:6]) for f in lines]
        elif target.excerpt:
            inputs = [f"{s} {f} {t}" for s, _, f, t in lines]
        else:
            inputs = [f"{a} {s} {d}" for a, s, _, d in lines]
        assert cases == inputs and len(cases) > 1500
        head = path.read_text().split("\n# columns")[0]
        if name in UNNAMED:
            continue
        assert f"make_vectors.py {name} --ksrc " in head
        assert "# source: " in head and " of Linux " in head


def test_release_names_a_debian_tree(tmp_path):
    """A tree's release is its Makefile's; a directory named after a linux-source .deb also names the package."""
    tree = tmp_path / "linux-source-6.1_6.1.192-3"
    tree.mkdir()
    (tree / "Makefile").write_text("# SPDX\nVERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 192\nEXTRAVERSION =\nNAME = x\n")
    assert make_vectors.release(tree) == "Linux 6.1.192 (Debian linux-source-6.1 6.1.192-3)"
    plain = tmp_path / "ksrc"
    plain.mkdir()
    (plain / "Makefile").write_text("VERSION = 7\nPATCHLEVEL = 2\nSUBLEVEL = 0\nEXTRAVERSION = -rc3\n")
    assert make_vectors.release(plain) == "Linux 7.2.0-rc3"
    assert make_vectors.release(tmp_path) == f"the tree {tmp_path.name} (no kernel Makefile)"


def test_a_tree_with_the_wrong_filter_form_is_refused(tmp_path):
    """A legacy net/core/filter.c given to a homogenized target is an error naming the form, not wrong numbers."""
    legacy = ("struct bpf_scratchpad {\n\tu32 diff[128];\n};\n\n"
              "BPF_CALL_5(bpf_csum_diff, __be32 *, from, u32, from_size,\n{\n\tstruct bpf_scratchpad *sp;\n}\n")
    (tmp_path / "filter.c").write_text(legacy)
    with pytest.raises(SystemExit, match="has the legacy bpf_csum_diff, this target needs the homogenized one"):
        make_vectors._excerpt(tmp_path / "filter.c", "homogenized", tmp_path)
