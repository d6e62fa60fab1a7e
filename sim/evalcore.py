"""Pieces of `make eval` shared by every block's evaluation (sim/eval.py: BabelFishTlb,
sim/walker_eval.py: NestedWalker, sim/pml_eval.py: PmlLogger, sim/devtlb_eval.py: DevTlb,
sim/perforated_eval.py: PerforatedL2Tlb):
progress output, cached harness builds (with on-demand test-only configurations), the parallel
run pool with progress and ETA, a section's build-and-run start, its JSON / CSV results and its
verdict, and Markdown tables."""
from __future__ import annotations

import concurrent.futures as cf
import csv
import json
import threading
import time
from pathlib import Path

import harness_build as hbuild

_print_lock = threading.Lock()


def say(msg: str) -> None:
    with _print_lock:
        print(msg, flush=True)


def fmt_t(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.1f} min"


def ensure_test_config(block: str, name: str, params: dict) -> str | None:
    """Generate a test-only configuration into build/sim/rtl_tb/<name>/ on demand (the
    testbenches' tb/xlat_tb/generate.py, regenerated when the generator is newer or the
    parameters differ). Returns None when it succeeded, else the reason it cannot be had."""
    import contextlib
    import io

    from xlat_tb.generate import TB_RTL, ensure_config
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):   # the generator's warnings: to a log, not the progress
            ensure_config(block, name, params)
        if buf.getvalue().strip():
            (TB_RTL / name / "generate.log").write_text(buf.getvalue())
            say(f"[gen] generated test-only configuration {name} into {TB_RTL / name} "
                f"(generator output: generate.log)")
        return None
    except BaseException as e:  # noqa: BLE001  (pytest's skip/fail outcomes outside pytest)
        if isinstance(e, KeyboardInterrupt):
            raise
        return f"{type(e).__name__}: {str(e).strip()[:300]}"


def build_configs(configs: list[str], obj_root: Path, tag: str = "build",
                  test_only: dict | None = None, block: str = "") -> tuple[dict, dict, dict]:
    """Build (or reuse) the harness of every configuration, one after another (each build
    runs `make -j2`). ``test_only`` {name: params} are generated first when needed.
    Returns (exes {config: path}, build_times {config: text}, skipped {config: reason})."""
    exes, times, skipped = {}, {}, {}
    for i, c in enumerate(configs, 1):
        if test_only and c in test_only:
            why = ensure_test_config(block, c, test_only[c])
            if why:
                skipped[c] = why
                say(f"[{tag} {i}/{len(configs)}] {c}: SKIPPED (test-only configuration not generated: {why})")
                continue
        t0 = time.monotonic()
        try:
            exes[c] = hbuild.build(c, Path(obj_root), log=lambda m, i=i: say(f"[{tag} {i}/{len(configs)}] {m}"))
        except FileNotFoundError as e:
            skipped[c] = str(e)
            say(f"[{tag} {i}/{len(configs)}] {c}: SKIPPED ({e})")
            continue
        dt = time.monotonic() - t0
        full = hbuild.last_build_seconds(c, Path(obj_root))
        times[c] = f"{dt:.0f}" if dt > 2 else f"cached (full build {full} s)" if full else "cached"
    return exes, times, skipped


def run_pool(jobs: list, fn, *, workers: int, weight=lambda j: 1, describe=lambda j, r: "",
             tag: str = "run") -> tuple[list, list]:
    """Run fn(job) for every job on ``workers`` threads (each job is typically one harness
    process), printing one progress line per finished job with the elapsed time and an ETA
    from the finished jobs' weights. Returns (results in completion order, failure messages)."""
    total = sum(weight(j) for j in jobs)
    done_w, done, results, failures = 0, 0, [], []
    t0 = time.monotonic()
    with cf.ThreadPoolExecutor(max_workers=max(1, workers)) as ex:
        futs = {ex.submit(fn, j): j for j in jobs}
        for f in cf.as_completed(futs):
            j = futs[f]
            done += 1
            done_w += weight(j)
            try:
                r = f.result()
            except Exception as e:  # noqa: BLE001
                failures.append(str(e))
                say(f"[{tag} {done:2d}/{len(jobs)}] FAILED {describe(j, None)}: {e}")
                continue
            results.append(r)
            el = time.monotonic() - t0
            eta = el * (total - done_w) / max(done_w, 1e-9)
            say(f"[{tag} {done:2d}/{len(jobs)}] {describe(j, r)}  [{fmt_t(el)} elapsed, ~{fmt_t(eta)} left]")
    return results, failures


def check_summary(d: dict, model_checked: bool = True) -> str:
    """How one run's result compares: the RTL counters against the harness's counts and, when
    the run was replayed on the reference model, the model's verdict (for the progress line)."""
    agree = "counters agree" if d["counters_agree"] else "COUNTER MISMATCH"
    if not model_checked:
        return f"{agree}, no model check"
    model = (f"model ok ({d['model_checked']})" if not d["n_mismatches"] else
             f"MODEL MISMATCH: {d['model_mismatches'][0][:200]}")
    return f"{agree}, {model}"


def md_table(header: list[str], rows: list[list], align: str | None = None) -> list[str]:
    """Markdown table lines; ``align`` one character per column ('l' or 'r')."""
    al = align or "l" * len(header)
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---:" if a == "r" else "---" for a in al) + "|"]
    out += ["| " + " | ".join(str(x) for x in r) + " |" for r in rows]
    return out


def build_and_run(title: str, block: str, jobs: list, args, out: Path, run_one, *, test_only: dict,
                  weight, describe) -> tuple[list, list, dict, dict]:
    """The start of a block's eval section: build (or reuse) the harness of every configuration
    the jobs name, drop the jobs of configurations that did not build, and run the rest
    heaviest first as run_one(exe, job, args, out). Returns (results, failures, build_times,
    skipped)."""
    configs = list(dict.fromkeys(j["config"] for j in jobs))
    say(f"[eval] {title} configurations: {', '.join(configs)}")
    exes, build_times, skipped = build_configs(configs, args.obj_root, tag=f"{block} build", block=block,
                                               test_only={c: test_only[c] for c in configs if c in test_only})
    jobs = sorted((j for j in jobs if j["config"] in exes), key=lambda j: -weight(j))
    say(f"[eval] {title}: {len(jobs)} runs on {args.jobs} parallel jobs")
    results, failures = run_pool(jobs, lambda j: run_one(exes[j["config"]], j, args, out),
                                 workers=args.jobs, weight=weight, describe=describe, tag=f"{block} run")
    return results, failures, build_times, skipped


def write_results(out: Path, block: str, results: list, keys: list[str], fkeys: list[str],
                  extra_header: list[str] = (), extra=lambda r: []) -> None:
    """<block>_results.json (every run) and <block>_results.csv (the run's ``keys``, its
    figures' ``fkeys``, then ``extra(r)`` under ``extra_header``)."""
    (out / f"{block}_results.json").write_text(json.dumps({"runs": results}, indent=1, default=str))
    with open(out / f"{block}_results.csv", "w", newline="") as fh:
        wr = csv.writer(fh)
        wr.writerow(list(keys) + list(fkeys) + list(extra_header))
        for r in results:
            wr.writerow([r.get(k) for k in keys] + [r["fig"][k] for k in fkeys] + list(extra(r)))


def section_verdict(title: str, results: list, failures: list, skipped, wall: float) -> bool:
    """A section passes when every run finished, every run's RTL counters agree with the
    harness, the reference model found no mismatch, and no named configuration was skipped."""
    bad = [r for r in results if not r["counters_agree"] or r["n_mismatches"]]
    say(f"[eval] {title}: {len(results)} runs, {fmt_t(wall)}")
    if failures or bad or skipped:
        say(f"[eval] ERROR: {title}: {len(failures)} failed runs, {len(bad)} runs with counter or model "
            f"mismatches, {len(skipped)} configurations skipped")
        return False
    return True
