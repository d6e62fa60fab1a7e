"""QEMU (rv64 with the H extension) as an external reference: build the bare-metal cross-check
program, write the blob of memory words and cases it loads, run one QEMU process for all of
them, parse its result lines (docs/qemu-crosscheck.md).

Why a program of our own and not a test ROM: the cases are page tables and addresses the
project's page-table builder lays out, so the program only writes a memory image, switches
satp / vsatp / hgatp / mstatus per case, ``mret``s into a one-instruction stub and records the
trap it comes back with.  Sources: tb/qemu/baremetal/ (crt.S, main.c, link.ld).

    tools = check_tools()                      # versions, against the minimums below
    elf = build_program(out_dir)               # riscv64-unknown-elf-gcc, into build/
    write_blob(path, words, cases)             # words: [(pa, value)], cases: [QemuCase]
    recs, changed = run_qemu(elf, blob, n)     # [{cause, tval, tval2, value, after}] in order,
                                               # {pa: value} of the image words that changed
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .paths import TB_DIR

SRC = TB_DIR / "qemu" / "baremetal"
QEMU = "qemu-system-riscv64"
GCC = "riscv64-unknown-elf-gcc"
# Debian 12's versions; older ones are refused (docs/qemu-crosscheck.md, "Versions", decided)
MIN_VERSIONS = {QEMU: (7, 2), GCC: (12, 2)}
BLOB_ADDR = 0x8010_0000
BLOB_MAGIC = 0x78716D7531000000
BLOB_LIMIT = 0x8200_0000           # the page tables and data start here (QemuLayout)
CASE_WORDS = 8

# case flags (tb/qemu/baremetal/main.c)
OPS = {"ld": 0, "sd": 1, "hlv": 2, "hsv": 3}
F_PRIV_S, F_V, F_SUM, F_VSSUM = 1 << 2, 1 << 3, 1 << 4, 1 << 5
F_SPVP, F_HU, F_USTUB = 1 << 6, 1 << 7, 1 << 8
F_MXR, F_VSMXR = 1 << 9, 1 << 10          # mstatus.MXR (the HS-level MXR), vsstatus.MXR


class QemuError(Exception):
    """QEMU or the program did not produce one result per case."""


@dataclass
class QemuCase:
    flags: int
    va: int
    satp: int = 0
    vsatp: int = 0
    hgatp: int = 0
    probe: int = 0           # stores: the word read back (and restored) after the case
    value: int = 0           # stores: the value stored

    def words(self) -> list:
        return [self.flags, self.va, self.satp, self.vsatp, self.hgatp, self.probe,
                self.value, 0]


def _version(cmd: str) -> tuple:
    out = subprocess.run([cmd, "--version"], capture_output=True, text=True, check=True).stdout
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", out.splitlines()[0])
    if not m:
        raise QemuError(f"cannot read the version of {cmd}: {out.splitlines()[0]!r}")
    return tuple(int(x) for x in m.groups() if x is not None)


def check_tools() -> dict:
    """{tool: version} of QEMU and the cross compiler; raises when missing or too old."""
    out = {}
    for tool, least in MIN_VERSIONS.items():
        if shutil.which(tool) is None:
            raise QemuError(f"{tool} missing: `make` installs it (Debian qemu-system-misc, "
                            f"gcc-riscv64-unknown-elf)")
        v = _version(tool)
        if v[:2] < least:
            raise QemuError(f"{tool} {'.'.join(map(str, v))} is older than "
                            f"{'.'.join(map(str, least))} (docs/qemu-crosscheck.md)")
        out[tool] = ".".join(map(str, v))
    return out


def build_program(out_dir: Path) -> Path:
    """Compile tb/qemu/baremetal/ into ``out_dir``/xcheck.elf (rebuilt when a source is newer)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    elf = out_dir / "xcheck.elf"
    srcs = sorted(SRC.iterdir())
    if elf.exists() and all(s.stat().st_mtime <= elf.stat().st_mtime for s in srcs):
        return elf
    tmp = out_dir / f"xcheck.elf.{os.getpid()}.tmp"     # xdist workers may build at once
    cmd = [GCC, "-march=rv64imac_zicsr", "-mabi=lp64", "-mcmodel=medany", "-O2", "-nostdlib",
           "-ffreestanding", "-fno-builtin", "-Wall", "-Wextra", "-Werror",
           "-Wl,--no-warn-rwx-segments", "-T", str(SRC / "link.ld"), "-o", str(tmp),
           str(SRC / "crt.S"), str(SRC / "main.c")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise QemuError(f"building the cross-check program failed:\n{' '.join(cmd)}\n{r.stderr}")
    tmp.replace(elf)
    return elf


def write_blob(path: Path, words, cases) -> None:
    """The blob the program reads at BLOB_ADDR: magic, #words, #cases, 0, then (pa, value)
    pairs written in order, then CASE_WORDS words per case."""
    body = [BLOB_MAGIC, len(words), len(cases), 0]
    for pa, v in words:
        body += [pa, v]
    for c in cases:
        body += c.words()
    if BLOB_ADDR + 8 * len(body) > BLOB_LIMIT:
        raise QemuError(f"blob of {8 * len(body)} bytes does not fit below {BLOB_LIMIT:#x}")
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(struct.pack(f"<{len(body)}Q", *body))
    tmp.replace(path)              # atomic: another worker's QEMU never loads half a blob


def qemu_command(elf: Path, blob: Path, ram_mib: int) -> list:
    return [QEMU, "-machine", "virt", "-cpu", "rv64,h=true", "-smp", "1", "-m", f"{ram_mib}M",
            "-bios", "none", "-kernel", str(elf),
            "-device", f"loader,file={blob},addr={BLOB_ADDR:#x},force-raw=on",
            "-display", "none", "-monitor", "none", "-serial", "stdio", "-no-reboot"]


def run_qemu(elf: Path, blob: Path, n_cases: int, *, ram_mib: int, timeout: float = 300,
             log: Path | None = None) -> list:
    """Run the program once: one dict per case (cause, tval, tval2, value, after), in order,
    and {pa: value} of the memory image's words that differ at the end (A/D updates).
    Raises QemuError when QEMU times out, fails, or the output lacks a case."""
    cmd = qemu_command(elf, blob, ram_mib)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise QemuError(f"QEMU did not finish in {timeout} s: {' '.join(cmd)}") from e
    if log is not None:
        log.write_text(r.stdout + r.stderr)
    recs, changed = {}, {}
    for line in r.stdout.splitlines():
        p = line.split()
        if len(p) == 7 and p[0] == "R":
            i, cause, tval, tval2, value, after = (int(x, 16) for x in p[1:])
            recs[i] = dict(cause=cause, tval=tval, tval2=tval2, value=value, after=after)
        elif len(p) == 3 and p[0] == "M":
            changed[int(p[1], 16)] = int(p[2], 16)
    if r.returncode or "END" not in r.stdout or len(recs) != n_cases:
        tail = "\n".join((r.stdout + r.stderr).splitlines()[-5:])
        raise QemuError(f"QEMU exit {r.returncode}, {len(recs)} of {n_cases} results:\n{tail}\n"
                        f"command: {' '.join(cmd)}")
    return [recs[i] for i in range(n_cases)], changed
