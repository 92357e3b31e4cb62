"""csum.kernel.insn.helper_calls: the helper calls of a compiled program and the constant flags they pass.

Expected values: llvm-objdump's disassembly of the same object (an independent decoder): every ``call N`` and the
``r5 = K`` lines on the paths into it; and programs assembled here with csum.kernel.insn whose constants are known
by construction. The compiled cases skip where clang or llvm-objdump is missing (libbpf reads the instructions).
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from bpf_build import EXAMPLES, compile_bpf

from csum.kernel import insn
from csum.kernel.insn import HelperCall, helper_calls


def test_assembled_paths():
    """A call reached on two paths with r5 = 0x10 and r5 = 0x30 gets both; r5 set from a register or never: None."""
    p = insn.Program()
    p.emit(insn.mov64_imm(5, 0x10))
    p.jump(lambda o: insn.jeq_imm(1, 0, o), "call")
    p.emit(insn.mov64_imm(5, 0x30))
    p.label("call")
    p.emit(insn.call(11), insn.mov64_reg(5, 1), insn.call(10), insn.call(9), insn.exit_())
    assert helper_calls(p.assemble()) == [HelperCall(3, 11, frozenset({0x10, 0x30})), HelperCall(5, 10, None),
                                          HelperCall(6, 9, None)]


@pytest.mark.skipif(shutil.which("clang") is None or shutil.which("llvm-objdump") is None,
                    reason="clang or llvm-objdump is not installed (apt-get install clang llvm)")
def test_compiled_program_matches_llvm_objdump(tmp_path):
    """tc_nat.o: the calls and constant r5 values helper_calls reads from the section are llvm-objdump's."""
    from csum.kernel.libbpf import BpfObject

    obj = compile_bpf(EXAMPLES / "tc_nat.c", tmp_path / "tc_nat.o")
    text = subprocess.run(["llvm-objdump", "-d", "--no-show-raw-insn", str(obj)], capture_output=True, text=True,
                          check=True).stdout
    lines = re.findall(r"^\s*(\d+):\s+(.*)$", text, re.M)
    calls = [(int(pc), int(m.group(1))) for pc, body in lines if (m := re.match(r"call (\d+)$", body.strip()))]
    r5 = {int(pc): int(m.group(1)) for pc, body in lines if (m := re.match(r"r5 = (\d+)$", body.strip()))}
    try:
        found = helper_calls(BpfObject(str(obj)).insns("tc_snat"))
    except Exception as exc:  # noqa: BLE001  (no libbpf here: nothing to read the instructions with)
        pytest.skip(f"libbpf unavailable: {exc}")
    assert [(c.pc, c.helper) for c in found] == calls
    l4 = next(c for c in found if c.helper == 11)
    assert l4.r5 == frozenset(v for pc, v in r5.items() if pc < l4.pc and v in (0x10, 0x30))  # BPF_F_PSEUDO_HDR | MANGLED_0
    assert all(c.r5 == frozenset({r5[max(pc for pc in r5 if pc < c.pc)]}) for c in found if c.helper in (9, 10, 28))
