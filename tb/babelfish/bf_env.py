"""BabelFishTlb cocotb environment: drivers, response monitor, scoreboard against the reference
model, protocol and timing checks, counters and functional coverage.

Checks, every cycle (ReadOnly phase):

* at most one of inval / fill / lookup is accepted; fill_ready is low while inval_valid;
  lookup_req_ready is low while inval_valid or fill_valid (priority inval > fill > lookup);
* accepted operations are applied to the model in acceptance order;
* every lookup gets exactly one response, exactly ``latency`` cycles after acceptance, and every
  field is compared with the model (a miss answers 0 in every field);
* nothing is accepted in the busy cycles the doc gives (the write shadow: latency - 1 cycles
  after a fill or an inval; sram inval kinds 2/3: sets + latency - 2 cycles, a sweep) -- a
  violation is an error;
* exact timing (doc "Timing"): outside busy cycles the readies follow only the priority rule.
  A deviation is a *timing* deviation, collected and reported at the end of the test; it fails
  the test unless XLAT_TIMING=warn (then it is only logged).

At the end of each test ``finish()`` drains, then compares every perf_* counter with the model.
"""

from __future__ import annotations

import os
from collections import deque

import cocotb
from cocotb.clock import Clock

from models.babelfish import (BabelFishModel, BabelFishParams, COUNTERS, GLOBAL, PRIVATE,
                              RESP_ALWAYS, RESP_ON_HIT, SHARED, CLASS_NAMES, INVAL_NAMES,
                              PAGE_NAMES)
from xlat_tb.backpressure import Never
from xlat_tb.coverage import Coverage
from xlat_tb.cycle import CycleLoop, TbError
from xlat_tb.drivers import DecoupledSource
from xlat_tb.manifest import load_manifest
from xlat_tb.monitors import ValidMonitor

LOOKUP_DEFAULTS = {"pcid": 0, "ccid": 0, "pcIdx": 0, "pcIdxValid": 0, "cmd": 0, "user": 0}
FILL_DEFAULTS = {"ppn": 0, "pageSize": 0, "perm_r": 1, "perm_w": 1, "perm_x": 1, "perm_u": 1,
                 "dirty": 1, "global": 0, "pcid": 0, "ccid": 0, "own": 1, "pc": 0}
INVAL_DEFAULTS = {"vpn": 0, "pcid": 0, "ccid": 0}


def _fmt(d: dict) -> str:
    return "{" + ", ".join(f"{k}={v:#x}" if isinstance(v, int) and v > 9 else f"{k}={v}"
                           for k, v in d.items() if not k.startswith("_")) + "}"


class BabelFishEnv:
    def __init__(self, dut, *, rng, gaps=None, name: str = "test"):
        self.dut = dut
        self.name = name
        self.rng = rng
        self.man = load_manifest(os.environ["XLAT_MANIFEST"])
        self.config = self.man.config
        self.p = BabelFishParams.from_dict(self.man.params)
        self.latency = self.p.latency
        self.sram = self.p.storage == "sram"
        self.w = {n: p.width for n, p in self.man.ports.items()}
        self._check_ports()
        self.model = BabelFishModel(self.p)
        self.log = dut._log

        gaps = gaps or {}
        self.loop = CycleLoop(dut.clock, dut.reset)
        self.inval = self.loop.add(DecoupledSource(
            dut, "inval", self.man.channel_fields("inval"), rng=rng,
            gaps=gaps.get("inval", Never())))
        self.fill = self.loop.add(DecoupledSource(
            dut, "fill", self.man.channel_fields("fill"), rng=rng,
            gaps=gaps.get("fill", Never())))
        self.lookup = self.loop.add(DecoupledSource(
            dut, "lookup_req", self.man.channel_fields("lookup_req"), rng=rng,
            gaps=gaps.get("lookup", Never())))
        self.resp = self.loop.add(ValidMonitor(dut, "lookup_resp",
                                               self.man.channel_fields("lookup_resp")))
        self.loop.post_sample.append(self._on_cycle)

        self.pending: deque = deque()       # (due cycle, lookup txn, LookupResult)
        self.history: deque = deque(maxlen=24)
        self.busy_until = 0                 # last busy cycle (sram), from the doc's timing
        self.busy_reason = ""
        self.ops = 0                        # accepted operations
        self.accepted_by_kind = {"inval": 0, "fill": 0, "lookup": 0}
        self.timing_deviations: list[str] = []
        self.timing_deviation_count = 0
        self.cov = Coverage(f"{self.config}/{name}")
        self._declare_coverage()
        self.on_lookup_result = []          # hooks(txn, LookupResult) for the stimulus
        self.on_fill_result = []
        # formal configurations: dbg_* ports expose every entry; compare them with the model
        self.dbg = None
        if self.man.has("dbg_valid") and not self.sram:
            n = self.p.sets * self.p.ways + self.p.superpageEntries
            self.dbg = {f: (getattr(dut, f"dbg_{f}"), self.w[f"dbg_{f}"] // n)
                        for f in ("valid", "vpn", "ppn", "pageSize", "global", "own", "pcid",
                                  "ccid", "vmid", "pc", "orpc") if self.man.has(f"dbg_{f}")}
            self.dbg_checks = 0

    # ------------------------------------------------------------- set-up
    def _check_ports(self):
        need = {
            "lookup_req": ("vpn", "pcid", "ccid", "pcIdx", "pcIdxValid", "cmd", "user"),
            "lookup_resp": RESP_ALWAYS + RESP_ON_HIT,
            "fill": tuple(FILL_DEFAULTS) + ("vpn",),
            "inval": ("kind", "vpn", "pcid", "ccid"),
        }
        missing = []
        for ch, fields in need.items():
            have = self.man.channel_fields(ch)
            missing += [f"{ch}_bits_{f}" for f in fields if f not in have]
        missing += [f"perf_{c}" for c in COUNTERS if not self.man.has(f"perf_{c}")]
        for c in ("clock", "reset", "lookup_req_valid", "lookup_req_ready", "lookup_resp_valid",
                  "fill_valid", "fill_ready", "inval_valid", "inval_ready"):
            if not self.man.has(c):
                missing.append(c)
        if missing:
            raise TbError(f"{self.config}: manifest lacks ports {missing}")
        p = self.p
        # the VMID tag (doc "VM isolation"): a vmid field on the three request channels with
        # vmidBits > 0, none at all without
        for ch in ("lookup_req", "fill", "inval"):
            have = self.man.channel_fields(ch).get("vmid")
            if have != (p.vmidBits or None):
                raise TbError(f"{self.config}: {ch}_bits_vmid width {have}, vmidBits {p.vmidBits}")
        expect = {"lookup_req_bits_vpn": p.vpnBits, "lookup_req_bits_pcid": p.pcidBits,
                  "lookup_req_bits_ccid": p.ccidBits, "lookup_req_bits_pcIdx": p.pcIdxBits,
                  "lookup_resp_bits_ppn": p.ppnBits, "fill_bits_pc": p.pcBits,
                  "inval_bits_kind": 3, "lookup_req_bits_cmd": 2}
        bad = {k: (self.w[k], v) for k, v in expect.items() if self.w[k] != v}
        if bad:
            raise TbError(f"{self.config}: port widths (manifest, from params) differ: {bad}")

    def _declare_coverage(self):
        c, p = self.cov, self.p
        share = p.sharing
        no_share = "sharing off: no shared entries"
        c.declare("lookup.miss", "lookup.hit.private", "lookup.hit.global",
                  "lookup.hit.4K", "lookup.hit.2M", "lookup.hit.1G",
                  "lookup.permFault.read", "lookup.permFault.write", "lookup.permFault.clean",
                  "lookup.permFault.exec", "lookup.permFault.user", "lookup.permFault.cmd3",
                  "lookup.private_over_global", "lookup.same_class_4K_or_lower_index_wins",
                  "fill.overwrite", "fill.invalid_way", "fill.evict.4k", "fill.evict.sp",
                  "fill.bad.pageSize3", "fill.bad.unalignedPpn", "fill.vpn_low_bits_ignored",
                  "fill.global", "inval.removed_some.page", "inval.removed_some.ctx")
        c.declare(*(f"inval.kind{k}.{p.inval_names[k]}" for k in range(8)))
        no_vmid = "vmidBits = 0: one VM"
        c.declare("vmid.lookup_blocked_by_other_vm", "vmid.fill_same_key_other_vm",
                  "vmid.inval_spared_other_vm", "vmid.inval_removed_some.vmid",
                  "vmid.inval_removed_some.page_vmid", required=p.vmid, why=no_vmid)
        c.declare("lookup.hit.shared", "lookup.crossHit", "lookup.pc_bit_rejection",
                  "lookup.pc_reject_then_private_hit", "lookup.private_over_shared",
                  "lookup.global_over_shared", "fill.shared",
                  required=share, why=no_share)
        bad_pcidx_possible = (1 << p.pcIdxBits) > p.pcBits
        c.declare("lookup.badPcIdx", required=bad_pcidx_possible,
                  why=f"pcBits={p.pcBits} fills all {p.pcIdxBits}-bit pcIdx values")
        c.declare("lookup.badPcIdx.would_have_hit_shared",
                  required=bad_pcidx_possible and share,
                  why="needs sharing and a pcBits that is not a power of 2")
        c.declare("timing.busy_after_fill", "timing.sram_sweep",
                  required=False, why="informational")

    def start(self):
        Clock(self.dut.clock, 10, unit="ns").start()
        self.loop.start()
        return self

    async def reset(self, cycles: int = 4):
        self.model.reset()
        self.pending.clear()
        self.busy_until = 0
        await self.loop.reset(cycles)
        # counters must be 0 after reset
        await self.check_counters(drain=False)

    # ------------------------------------------------------------- per cycle
    def _err(self, msg: str):
        hist = "\n    ".join(self.history)
        raise TbError(f"[{self.config} cycle {self.loop.cycle}] {msg}\n  recent operations:\n"
                      f"    {hist}")

    def _timing(self, msg: str):
        self.timing_deviation_count += 1
        if len(self.timing_deviations) < 10:
            last = self.history[-1] if self.history else "none"
            self.timing_deviations.append(f"cycle {self.loop.cycle}: {msg}; last accepted: {last}")

    def _on_cycle(self, cycle: int):
        if self.loop.in_reset:
            return
        iv, fv, lv = self.inval.valid_now, self.fill.valid_now, self.lookup.valid_now
        ir, fr, lr = self.inval.ready_now, self.fill.ready_now, self.lookup.ready_now
        acc = [(k, s.accepted) for k, s in (("inval", self.inval), ("fill", self.fill),
                                             ("lookup", self.lookup)) if s.accepted is not None]
        # --- protocol: one operation per cycle, priority inval > fill > lookup
        if len(acc) > 1:
            self._err(f"more than one operation accepted in one cycle: {[k for k, _ in acc]}")
        if fr and iv:
            self._err("fill_ready high while inval_valid (priority inval > fill)")
        if lr and (iv or fv):
            self._err("lookup_req_ready high while inval_valid or fill_valid (priority)")
        busy = cycle <= self.busy_until
        if busy and acc:
            self._err(f"{acc[0][0]} accepted in cycle {cycle}, a busy cycle after "
                      f"{self.busy_reason} (doc: Timing, write shadow)")
        # --- exact timing (doc): readies high except the priority rule and busy cycles
        want_ir = int(not busy)
        want_fr = int(not busy and not iv)
        want_lr = int(not busy and not iv and not fv)
        for nm, have, want in (("inval_ready", ir, want_ir), ("fill_ready", fr, want_fr),
                               ("lookup_req_ready", lr, want_lr)):
            if have != want:
                self._timing(f"{nm}={have}, doc timing expects {want} (busy={busy}"
                             f"{', ' + self.busy_reason if busy else ''}, inval_valid={iv}, "
                             f"fill_valid={fv})")
        # a write lands at the end of its last busy cycle: outside busy cycles the arrays hold
        # every operation accepted so far (pipelined configurations lag inside them)
        if self.dbg is not None and not busy:
            self._check_dbg()
        # --- responses
        item = self.resp.item
        if item is not None:
            if not self.pending:
                self._err(f"lookup_resp_valid without an outstanding lookup: {_fmt(item)}")
            due, txn, res = self.pending[0]
            if due != cycle:
                self._err(f"lookup response in cycle {cycle}, expected in cycle {due} "
                          f"(latency {self.latency}) for lookup {_fmt(txn)}")
            self.pending.popleft()
            self._compare(item, txn, res, cycle)
        elif self.pending and self.pending[0][0] <= cycle:
            due, txn, _ = self.pending[0]
            self._err(f"no lookup response in cycle {due} for lookup {_fmt(txn)} accepted in "
                      f"cycle {txn['_cycle']} (latency {self.latency})")
        # --- apply accepted operation to the model
        for kind, txn in acc:
            self.ops += 1
            self.accepted_by_kind[kind] += 1
            if kind == "inval":
                self._apply_inval(txn, cycle)
            elif kind == "fill":
                self._apply_fill(txn, cycle)
            else:
                self._apply_lookup(txn, cycle)

    def _check_dbg(self):
        """dbg_* (doc "Ports"): entry i = set*ways + way, superpage j at sets*ways + j; field F
        of entry i is bits [i*W +: W].  Checked in cycles that are not busy: then the state is the
        one after every operation accepted before the cycle, which is what the model holds."""
        p = self.p
        raw = {f: (int(h.value), w) for f, (h, w) in self.dbg.items()}
        slots = [e for ways in self.model.sets for e in ways] + list(self.model.sp)
        bad = []
        for i, e in enumerate(slots):
            got = {f: (v >> (i * w)) & ((1 << w) - 1) for f, (v, w) in raw.items()}
            where = (f"4k set {i // p.ways} way {i % p.ways}" if i < p.sets * p.ways
                     else f"superpage {i - p.sets * p.ways}")
            if got["valid"] != (e is not None):
                bad.append(f"{where}: dbg_valid={got['valid']}, model "
                           f"{'entry ' + str(e) if e else 'empty'}")
                continue
            if e is None:
                continue
            low = {0: 0, 1: 9, 2: 18}[e.pageSize]
            exp = {"pageSize": e.pageSize, "global": e.glob, "own": e.own, "pcid": e.pcid,
                   "ccid": e.ccid, "vmid": e.vmid, "pc": e.pc if p.sharing else 0,
                   "orpc": int(e.pc != 0) if p.sharing else 0}
            diff = [f"{f}={got[f]:#x} (model {v:#x})" for f, v in exp.items()
                    if f in got and got[f] != v]
            if "vpn" in got and got["vpn"] >> low != e.vpn >> low:
                diff.append(f"vpn={got['vpn']:#x} (model {e.vpn:#x}, compared above bit {low})")
            if "ppn" in got and got["ppn"] >> low != e.ppn >> low:
                diff.append(f"ppn={got['ppn']:#x} (model {e.ppn:#x}, compared above bit {low})")
            if diff:
                bad.append(f"{where}: " + ", ".join(diff))
        self.dbg_checks += 1
        if bad:
            self._err("dbg_* array state differs from the model (entry placement or fields):\n    "
                      + "\n    ".join(bad))

    def _apply_inval(self, txn, cycle):
        res = self.model.inval(**{k: v for k, v in txn.items() if not k.startswith("_")})
        txn["_result"] = res
        k = txn["kind"]
        self.cov.hit(f"inval.kind{k}.{self.p.inval_names[k]}")
        if res.removed and k in (4, 5):
            self.cov.hit("inval.removed_some.page")
        if res.removed and k in (2, 3):
            self.cov.hit("inval.removed_some.ctx")
        if self.p.vmid:
            if res.spared_other_vm:
                self.cov.hit("vmid.inval_spared_other_vm")
            if res.removed and k in (6, 7):
                self.cov.hit(f"vmid.inval_removed_some.{self.p.inval_names[k]}")
        self.history.append(f"c{cycle} inval {_fmt(txn)} -> removed {res.removed}")
        busy = self.p.busy_after_inval(k)
        if busy:
            self.busy_until, self.busy_reason = cycle + busy, f"inval kind {k} @ {cycle}"
            if busy > self.p.latency - 1:
                self.cov.hit("timing.sram_sweep")

    def _apply_fill(self, txn, cycle):
        res = self.model.fill(**{k: v for k, v in txn.items() if not k.startswith("_")})
        txn["_result"] = res
        c = self.cov
        if not res.installed:
            c.hit("fill.bad.pageSize3")
        else:
            c.hit({"overwrite": "fill.overwrite", "invalid": "fill.invalid_way",
                   "evict": f"fill.evict.{res.array}"}[res.rule])
            if res.bad:
                c.hit("fill.bad.unalignedPpn")
            if res.vpn_low_ignored:
                c.hit("fill.vpn_low_bits_ignored")
            if res.other_vm_same_key:
                c.hit("vmid.fill_same_key_other_vm")
            if txn["global"]:
                c.hit("fill.global")
            elif not txn["own"] and self.p.sharing:
                c.hit("fill.shared")
        self.history.append(
            f"c{cycle} fill {_fmt(txn)} -> "
            + (f"{res.array}[{res.way}] {res.rule}" if res.installed else "not installed"))
        if self.p.busy_after_fill():
            self.busy_until, self.busy_reason = cycle + self.p.busy_after_fill(), f"fill @ {cycle}"
            self.cov.hit("timing.busy_after_fill")
        for h in self.on_fill_result:
            h(txn, res)

    def _apply_lookup(self, txn, cycle):
        res = self.model.lookup(**{k: v for k, v in txn.items() if not k.startswith("_")})
        txn["_exp"] = res
        self.pending.append((cycle + self.latency, txn, res))
        c = self.cov
        r = res.resp
        if not r["hit"]:
            c.hit("lookup.miss")
        else:
            c.hit(f"lookup.hit.{CLASS_NAMES[res.cls]}")
            c.hit(f"lookup.hit.{PAGE_NAMES[r['pageSize']]}")
            if r["crossHit"]:
                c.hit("lookup.crossHit")
            for reason in res.fault_reasons:
                c.hit(f"lookup.permFault.{reason}")
            m = res.matched_classes
            if res.cls == PRIVATE and SHARED in m:
                c.hit("lookup.private_over_shared")
            if res.cls == PRIVATE and GLOBAL in m:
                c.hit("lookup.private_over_global")
            if res.cls == GLOBAL and SHARED in m:
                c.hit("lookup.global_over_shared")
            if res.same_class_multi:
                c.hit("lookup.same_class_4K_or_lower_index_wins")
            if res.pc_reject and res.cls == PRIVATE:
                c.hit("lookup.pc_reject_then_private_hit")
        if res.pc_reject:
            c.hit("lookup.pc_bit_rejection")
        if res.vm_blocked:
            c.hit("vmid.lookup_blocked_by_other_vm")
        if res.bad_pcidx:
            c.hit("lookup.badPcIdx")
            # would a shared entry have served it had pcIdx been in range with its bit clear?
            if not r["hit"] or res.cls != PRIVATE:
                for _e in self._covering_shared(txn):
                    c.hit("lookup.badPcIdx.would_have_hit_shared")
                    break
        self.history.append(
            f"c{cycle} lookup {_fmt(txn)} -> expect "
            + (f"hit {CLASS_NAMES[res.cls]} {res.array}[{res.way}] ppn={r['ppn']:#x}"
               if r["hit"] else "miss"))
        for h in self.on_lookup_result:
            h(txn, res)

    def _covering_shared(self, txn):
        vpn, ccid, vmid = txn["vpn"], txn["ccid"], txn.get("vmid", 0)
        for _, _, _, e in self.model.entries():
            if e.cls == SHARED and e.ccid == ccid and e.vmid == vmid and e.covers(vpn):
                yield e

    def _compare(self, got: dict, txn: dict, res, cycle: int):
        exp = res.resp
        fields = RESP_ALWAYS + RESP_ON_HIT  # a miss answers 0 in every field (doc)
        diff = {f: (got[f], exp[f]) for f in fields if got[f] != exp[f]}
        txn["_resp"] = got
        if diff:
            desc = ", ".join(f"{f}: dut={a:#x} model={b:#x}" for f, (a, b) in diff.items())
            s = self.model.set_index(txn["vpn"])
            state = [f"4k set {s}:"] + [f"      way {w}: {e}" for w, e in
                                        enumerate(self.model.sets[s]) if e is not None]
            state += ["    superpage array:"] + [f"      way {w}: {e}" for w, e in
                                                 enumerate(self.model.sp) if e is not None]
            self._err(f"lookup response mismatch for {_fmt(txn)} accepted in cycle "
                      f"{txn['_cycle']}: {desc}\n  model expected {_fmt(exp)}\n  dut gave "
                      f"{_fmt(got)}\n  model state after the lookup:\n    " + "\n    ".join(state))

    # ------------------------------------------------------------- directed API
    def _lk(self, f: dict) -> dict:
        t = dict(LOOKUP_DEFAULTS)
        t.update(f)
        return t

    def _fl(self, f: dict) -> dict:
        f = dict(f)
        if "glob" in f:
            f["global"] = f.pop("glob")
        t = dict(FILL_DEFAULTS)
        t.update(f)
        return t

    def _iv(self, f: dict) -> dict:
        t = dict(INVAL_DEFAULTS)
        t.update(f)
        return t

    def send_lookup(self, **f) -> dict:
        return self.lookup.send(self._lk(f))

    def send_fill(self, **f) -> dict:
        return self.fill.send(self._fl(f))

    def send_inval(self, **f) -> dict:
        return self.inval.send(self._iv(f))

    async def do_lookup(self, **f) -> dict:
        """Send one lookup and wait for its (already model-checked) response."""
        txn = self.send_lookup(**f)
        await self.loop.wait_until(lambda: "_resp" in txn, timeout=4 * self.p.sets + 64,
                                   what=f"response to lookup {_fmt(txn)}")
        return txn["_resp"]

    async def do_fill(self, **f):
        txn = self.send_fill(**f)
        await self.loop.wait_until(lambda: "_result" in txn, timeout=4 * self.p.sets + 64,
                                   what=f"fill {_fmt(txn)} accepted")
        return txn["_result"]

    async def do_inval(self, **f):
        txn = self.send_inval(**f)
        await self.loop.wait_until(lambda: "_result" in txn, timeout=4 * self.p.sets + 64,
                                   what=f"inval {_fmt(txn)} accepted")
        return txn["_result"]

    @property
    def quiet(self) -> bool:
        return (self.inval.idle and self.fill.idle and self.lookup.idle and not self.pending)

    async def drain(self, timeout: int = 200000):
        await self.loop.wait_held(lambda: self.quiet, max(3, self.latency + 2), timeout, "drain")
        # let an sram sweep finish before anyone reads counters or state
        if self.busy_until >= self.loop.cycle:
            await self.loop.cycles(self.busy_until - self.loop.cycle + 2)

    def read_counters(self) -> dict:
        out = {}
        for name in self.man.ports_with_prefix("perf_"):
            out[name[len("perf_"):]] = int(getattr(self.dut, name).value)
        return out

    async def check_counters(self, drain: bool = True):
        if drain:
            await self.drain()
        got = self.read_counters()
        exp = self.model.counters
        diff = {k: (got.get(k), v) for k, v in exp.items() if got.get(k) != v}
        extra = sorted(set(got) - set(exp))
        if extra:
            self.log.info("perf ports not in the model (not checked): %s", extra)
        if diff:
            self._err("perf counters differ (dut, model): " +
                      ", ".join(f"{k}: {a} != {b}" for k, (a, b) in diff.items()))
        return got

    async def finish(self, *, counters: bool = True):
        """End of a test: drain, compare all counters, report timing deviations."""
        if counters:
            await self.check_counters()
        self.loop.check()
        if self.timing_deviation_count and os.environ.get("XLAT_TIMING", "strict") == "warn":
            self.log.warning("XLAT_TIMING=warn: %d timing deviation(s) not failing the test:\n  %s",
                             self.timing_deviation_count, "\n  ".join(self.timing_deviations))
        elif self.timing_deviation_count:
            raise TbError(f"[{self.config}] {self.timing_deviation_count} cycle(s) where the readies "
                          f"differ from the doc's timing; first ones:\n  "
                          + "\n  ".join(self.timing_deviations))
