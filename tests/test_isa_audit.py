"""ISA-safety audit of the built extension modules, by disassembly.

The kernels are compiled once per ISA (AVX-512, AVX2+FMA, portable) into one shared object and chosen at import by
cpuid. That is only safe if no instruction above the baseline can run before, or without, that choice. This audit
reads the shipped module itself (`objdump -d -C`, symbols kept at install) and checks, function by function:

1. AVX-512 code (zmm / opmask / EVEX-only registers and mnemonics) only inside ``fv::avx512::``;
2. any VEX/EVEX code (AVX, AVX2, FMA, F16C) only inside ``fv::avx2::`` or ``fv::avx512::``;
3. table registration (``fv::<isa>::fill_*``), which stores kernel addresses, uses no VEX/EVEX instruction;
4. code outside an ISA namespace reaches that namespace only through ``fv::<isa>::fill_table`` (every kernel is
   then called through the dispatch table, never directly).

Functions are attributed by their demangled names, so a template instantiated with a TU-local lambda type counts
for the ISA of its translation unit, while an inline function merged across ISAs by the linker (the ODR hazard
described in csrc/cpu/common.h) has no ISA in its name and is caught by rules 1-2.
"""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field

import pytest

ISAS = ("avx512", "avx2", "portable")
_FUNC_RE = re.compile(r"^([0-9a-f]+) <(.*)>:$")
_INSN_RE = re.compile(r"^\s+[0-9a-f]+:\s+(.*)$")
_TARGET_RE = re.compile(r"<([^<>]*(?:<[^<>]*(?:<[^<>]*>[^<>]*)*>[^<>]*)*)>\s*$")
_PREFIXES = {"lock", "rep", "repz", "repnz", "repe", "repne", "notrack", "bnd", "data16", "cs", "ds", "es",
             "ss", "fs", "gs", "addr32", "rex", "rex.W", "xacquire", "xrelease", "{vex}", "{evex}"}
# EVEX-only registers (zmm, opmask k1-k7 as operands, xmm/ymm 16-31), embedded broadcast, and mnemonics that exist
# only with AVX-512 encodings.
_AVX512_OPERAND = re.compile(r"%zmm\d|%k[0-7]\b|%[xy]mm(?:1[6-9]|2\d|3[01])\b|\{1to\d+\}|\{%k[1-7]\}")
_AVX512_MNEMONIC = re.compile(
    r"^(?:k(?:mov|and|or|xor|not|shift|test|ortest|add|unpck)\w*|vpternlog\w+|vperm[it]2\w+|vp?compress\w+|"
    r"vp?expand\w+|vpmovm2\w|vpmov\w2m|vp?broadcast[if](?:32x[248]|64x[24])|v(?:insert|extract)[if](?:32x[48]|64x[24])|"
    r"vpmov(?:us|s)?(?:qd|qw|qb|dw|db|wb)|vrndscale\w+|vgetexp\w+|vgetmant\w+|vscalef\w+|vfixupimm\w+|vrcp14\w+|"
    r"vrsqrt14\w+|vpabsq|vpm(?:ax|in)[su]q|vpsraq|vpsravq|vpro[lr]v?[dq]|vpcmpu?[bwdq]|vpconflict\w|vplzcnt\w|"
    r"vcvt(?:t?p[sd]2u|u\w+2p|t?s[sd]2usi|usi2s)\w*|valign[dq]|vdbpsadbw|vpmadd52\w+|vpshufbitqmb|vshuf[if]\d+x\d)$")


@dataclass
class Function:
    name: str
    owner: str | None  # the ISA namespace its name puts it in, or None (baseline code)
    avx512: list = field(default_factory=list)  # offending instruction lines
    vex: list = field(default_factory=list)
    targets: set = field(default_factory=set)  # symbols it calls, jumps to or takes the address of


def _owner(name: str) -> str | None:
    for isa in ISAS:
        if f"fv::{isa}::" in name:
            return isa
    return None


def _strip_offset(sym: str) -> str:
    return re.sub(r"\+0x[0-9a-f]+$", "", sym)


def parse_disassembly(text: str) -> dict[str, Function]:
    """Split `objdump -d -C --no-show-raw-insn` output into functions with their ISA-relevant facts."""
    funcs: dict[str, Function] = {}
    cur: Function | None = None
    for line in text.splitlines():
        m = _FUNC_RE.match(line)
        if m:
            name = m.group(2)
            cur = funcs.setdefault(name, Function(name, _owner(name)))
            continue
        if cur is None:
            continue
        m = _INSN_RE.match(line)
        if not m:
            continue
        insn = m.group(1)
        parts = insn.split()
        while parts and parts[0] in _PREFIXES:
            parts = parts[1:]
        if not parts:
            continue
        mnemonic, operands = parts[0], " ".join(parts[1:])
        code = operands.split("#", 1)[0]
        if _AVX512_OPERAND.search(code) or _AVX512_MNEMONIC.match(mnemonic):
            cur.avx512.append(insn)
        if mnemonic.startswith("v") and mnemonic not in ("verr", "verw"):
            cur.vex.append(insn)
        t = _TARGET_RE.search(operands)
        if t and (mnemonic.startswith(("call", "jmp", "j", "lea", "mov")) or "#" in operands):
            cur.targets.add(_strip_offset(t.group(1)))
    return funcs


def audit(funcs: dict[str, Function]) -> list[str]:
    """Every rule violation, one readable line each (empty: the module is ISA-safe)."""
    problems = []
    for f in funcs.values():
        if f.avx512 and f.owner != "avx512":
            problems.append(f"AVX-512 code outside fv::avx512: {f.name}: {f.avx512[0]}")
        if f.vex and f.owner not in ("avx2", "avx512"):
            problems.append(f"AVX/AVX2/FMA/F16C code outside fv::avx2/fv::avx512: {f.name}: {f.vex[0]}")
        if f.owner in ("avx2", "avx512") and re.search(rf"fv::{f.owner}::fill_\w+\(", f.name) and f.vex:
            problems.append(f"table registration executes {f.owner} instructions (it runs before kernels are "
                            f"chosen and must stay baseline x86-64): {f.name}: {f.vex[0]}")
        for target in f.targets:
            if target not in funcs:  # data (objdump names the nearest symbol): only code references count
                continue
            t_owner = _owner(target)
            if t_owner in ("avx2", "avx512") and f.owner != t_owner \
                    and not target.startswith(f"fv::{t_owner}::fill_table("):
                problems.append(f"{f.name} reaches {target} directly (ISA code must be reached only through the "
                                f"dispatch table)")
    return sorted(set(problems))


def _module_paths() -> list[str]:
    """The installed extension modules (FLOWVISION_AUDIT_MODULES=a.so:b.so audits other builds instead)."""
    if os.environ.get("FLOWVISION_AUDIT_MODULES"):
        return os.environ["FLOWVISION_AUDIT_MODULES"].split(os.pathsep)
    out = []
    for mod in ("flowvision.backend._C", "flowvision.backend._C_cuda"):
        spec = importlib.util.find_spec(mod)
        if spec is not None and spec.origin:
            out.append(spec.origin)
    return out


def _disassemble(path: str) -> str:
    objdump = shutil.which("objdump")
    if objdump is None:
        pytest.fail("objdump not found: install binutils (apt-get install binutils) to run the ISA audit")
    syms = subprocess.run(["nm", path], capture_output=True, text=True)
    if "no symbols" in syms.stderr or not syms.stdout.strip():
        pytest.fail(f"{path} is stripped: the audit needs its symbol table (pyproject.toml keeps it with "
                    "install.strip = false; rebuild with `pip install -e .`)")
    return subprocess.run([objdump, "-d", "-C", "--no-show-raw-insn", path], capture_output=True, text=True,
                          check=True).stdout


@pytest.mark.parametrize("path", _module_paths(), ids=os.path.basename)
def test_module_is_isa_safe(path):
    funcs = parse_disassembly(_disassemble(path))
    assert len(funcs) > 50, f"{path}: only {len(funcs)} functions found in the disassembly"
    problems = audit(funcs)
    assert not problems, f"{path}: {len(problems)} ISA-safety violations:\n" + "\n".join(problems[:40])


def test_cpu_module_has_every_isa_and_registration():
    """The audit looks at the right things: kernels of each ISA and their registration functions are present."""
    path = _module_paths()[0]
    funcs = parse_disassembly(_disassemble(path))
    for isa in ISAS:
        assert any(f.owner == isa for f in funcs.values()), f"no fv::{isa}:: function in {path}"
        assert any(f.name.startswith(f"fv::{isa}::fill_table(") for f in funcs.values())
    assert any(f.avx512 for f in funcs.values() if f.owner == "avx512"), "AVX-512 kernels use no zmm?"
    assert not any(f.vex for f in funcs.values() if f.owner == "portable")


# The rules on small hand-written listings: each must flag what it is for and pass clean code.
_CLEAN = """\
0000000000001000 <fv::avx512::(anonymous namespace)::gemm_kernel(float const*)>:
    1000:\tvmovups (%rdi),%zmm1
    1006:\tvfmadd231ps %zmm1,%zmm2,%zmm3
0000000000002000 <fv::avx512::fill_table(fv::KernelTable&)>:
    2000:\tlea    -0x1007(%rip),%rax        # 1000 <fv::avx512::(anonymous namespace)::gemm_kernel(float const*)>
    2007:\tmovq   %rax,%xmm0
    200c:\tmovups %xmm0,(%rdi)
0000000000003000 <(anonymous namespace)::init_dispatch()>:
    3000:\tcall   2000 <fv::avx512::fill_table(fv::KernelTable&)>
"""


def test_audit_passes_clean_listing():
    assert audit(parse_disassembly(_CLEAN)) == []


@pytest.mark.parametrize("bad, expect", [
    # AVX-512 store in registration: the original import-time SIGILL
    ("0000000000002000 <fv::avx512::fill_table(fv::KernelTable&)>:\n    2000:\tvinserti64x4 $0x1,%ymm1,%zmm0,%zmm0\n",
     "table registration"),
    # an inline helper merged across ISAs by the linker
    ("0000000000004000 <float std::inner_product<float const*>(float const*)>:\n    4000:\tvaddps %ymm0,%ymm1,%ymm1\n",
     "outside fv::avx2/fv::avx512"),
    ("0000000000004000 <fv::avx2::helper()>:\n    4000:\tvpternlogd $0xff,%ymm0,%ymm0,%ymm0\n",
     "AVX-512 code outside fv::avx512"),
    ("0000000000004000 <fv::avx2::helper()>:\n    4000:\tvaddps %ymm17,%ymm1,%ymm1\n",
     "AVX-512 code outside fv::avx512"),
    # baseline code calling a kernel directly instead of through the table
    ("0000000000005000 <bind_gemm()>:\n    5000:\tcall   1000 <fv::avx512::(anonymous namespace)::gemm_kernel(float const*)>\n",
     "directly"),
    # a static initializer compiled with -mavx2
    ("0000000000006000 <_GLOBAL__sub_I_gemm.cpp>:\n    6000:\tvxorps %xmm0,%xmm0,%xmm0\n",
     "outside fv::avx2/fv::avx512"),
])
def test_audit_flags_violation(bad, expect):
    problems = audit(parse_disassembly(_CLEAN + bad))
    assert any(expect in p for p in problems), problems
