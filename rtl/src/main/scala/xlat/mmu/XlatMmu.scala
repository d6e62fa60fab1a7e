package xlat.mmu

import chisel3._
import chisel3.util._
import xlat.babelfish.{BabelFishTlb, LookupResp}
import xlat.common._
import xlat.pml.{CsrReq, PmlExit, PmlGuestIrq, PmlLogger}
import xlat.walker.{Fault, NestedWalker}

/** The sequencer's states (see [[XlatMmu]]). */
object MmuState extends ChiselEnum {
  val Idle, L1Req, L1Wait, L2Req, L2Wait, WalkReq, WalkWait, Fill, Resp, FenceInv, FenceWait, FenceDone = Value
}

/** XlatMmu: the blocks composed into one MMU for a core (spec xlat-mmu.md; design decided in
  * docs/xlat-mmu.md before this RTL).
  *
  * ==Structure==
  * {{{
  * req -> L1 BabelFishTlb (flops) -miss-> L2 BabelFishTlb (sram) -miss-> NestedWalker (mode)
  *          | hit + PrivCheck              | hit + PrivCheck: fill L1      | leaf: fill L2 and L1
  *          v                              v                               v      fault: no fill
  *         resp (source L1)               resp (source L2)                resp (source walk)
  * NestedWalker dirty events -> PmlLogger;  walker + PmlLogger memory -> MemMerge -> mem_req
  * csr_*: PmlLogger below 0x8000, the MMU's CTRL and every counter from 0x8000 (MmuRegs)
  * }}}
  * Both TLBs tag entries with the context {mode class, vmid} in their VMID tag (`vmidBits` =
  * vmidBits + 2), stage-1-only requests with vmid 0: [[FenceKind.ctx]].
  *
  * ==Sequencer (one request at a time, **decided** for this first version)==
  * {{{
  * Idle --fence--> FenceInv <-> FenceWait --> FenceDone (fenceDone pulse) --> Idle
  *   |--bare / cmd 3--------------------------------------------------> Resp --> Idle
  *   |--in range--> L1Req -> L1Wait --hit ok---------------------------> Resp
  *   |                          `--miss--> L2Req -> L2Wait --hit ok--> Fill (L1) --> Resp
  *   |                                                  `--miss--> WalkReq -> WalkWait
  *   `--address fails the mode's check---------------------------------^      | ok: Fill (L2, L1) -> Resp
  *                                                                            ` fault: Resp
  * }}}
  * A disabled level (CTRL) is skipped, neither looked up nor filled; fences reach it anyway.
  *
  * ==Decided points (docs/xlat-mmu.md "Decided while building")==
  *  - A TLB hit answers only if PrivCheck allows the access on the entry's permissions (the
  *    walk's guest AND host permissions: allowed there implies allowed by each stage) and a
  *    write finds D set; otherwise it is a miss and the walk answers, with the exact fault.
  *    So the TLBs keep one [[Perm]] and no block changed.
  *  - A fence is accepted only in Idle (nothing in flight: the drain), and before a request
  *    offered in the same cycle; its invalidations then go to L1 and L2 together, the walker is
  *    flushed with the first one, and `fenceDone` pulses once both TLBs are idle again.
  *  - Every fill is private (own = 1); stage-2-only entries are global (their VA is a GPA).
  *  - A 512 GiB leaf (Sv48 / Sv48x4) is answered and filled as its 1 GiB part (docs M7).
  *  - A CSR access accepted in cycle r applies in r + 1 (a read returns the registers as they
  *    are in r + 1, a write takes effect at its end), as PmlLogger's, and is answered in r + 2
  *    ([[MmuCsr$]], session 34): the read multiplexer of ~70 registers spread over every block
  *    is two registered AND-OR stages (it limited the routed `mmu_rv` to 78.67 MHz as one).
  *    One access a cycle, each answered once, in order; `csr_req` is always ready.
  */
class XlatMmu(val p: XlatMmuParams) extends Module {
  override def desiredName = "XlatMmu"

  val io = FlatIO(new Bundle {
    val req = Flipped(Decoupled(new MmuReq(p)))
    val resp = Decoupled(new MmuResp(p))
    val fence = Flipped(Decoupled(new MmuFence(p)))
    /** One pulse per accepted fence, once nothing it covers can be used again. */
    val fenceDone = Output(Bool())
    val mem_req = Decoupled(new MemReq(p.memIdBits, p.paBits))
    val mem_resp = Flipped(Decoupled(new MemResp(p.memIdBits)))
    val csr_req = Flipped(Decoupled(new CsrReq))
    val csr_resp = Valid(new xlat.pml.CsrResp)
    val exit = Decoupled(new PmlExit(p.pml))
    val guestIrq = Decoupled(new PmlGuestIrq(p.pml))
    val perf = Output(new PerfCounters(MmuPerf.names))
    val dbg = if (p.formalPorts) Some(Output(new MmuDbg(p))) else None
  })

  private val l1 = Module(new BabelFishTlb(p.l1))
  private val l2 = Module(new BabelFishTlb(p.l2))
  private val walker = Module(new NestedWalker(p.walker))
  private val pml = Module(new PmlLogger(p.pml))

  private val S = MmuState
  private val state = RegInit(S.Idle)
  private val rq = Reg(new MmuReq(p))
  private val ctx = Reg(UInt(p.ctxBits.W))
  private val rs = Reg(new MmuResp(p))
  // the entry a Fill state writes (from the L2 hit or the walk)
  private val fillPpn = Reg(UInt((p.paBits - 12).W))
  private val fillSize = Reg(UInt(PageSize.width.W))
  private val fillPerm = Reg(new Perm)
  private val fillDirty = Reg(Bool())
  private val fillL1 = RegInit(false.B)
  private val fillL2 = RegInit(false.B)

  private val csrPerf = MmuRegs.groups.map(g => Wire(Vec(g.size, UInt(PerfCounter.width.W))))
  private val csr = new MmuCsr(csrPerf)

  // ---- acceptance -----------------------------------------------------------------------------
  private val idle = state === S.Idle
  io.fence.ready := idle
  io.req.ready := idle && !io.fence.valid

  private val in = io.req.bits
  private val badCmd = in.cmd === AccessCmd.Reserved.U
  private val bare = in.mode === TransMode.Bare.U
  private val bareTooWide = if (p.paBits < 64) in.va(63, p.paBits).orR else false.B
  // a va the TLBs cannot tell apart from another (non-canonical, beyond the GPA range) never
  // looks up: the walker answers its fault 5
  private val inRange = Mux(in.mode === TransMode.Stage2.U, p.h.inRange(in.va), p.g.inRange(in.va))
  private def firstLevel: MmuState.Type = Mux(csr.l1Enable, S.L1Req, Mux(csr.l2Enable, S.L2Req, S.WalkReq))

  private def answer(pa: UInt, size: UInt, fault: UInt, stage: UInt, gpa: UInt, source: Int): Unit = {
    rs.pa := pa; rs.pageSize := size; rs.fault := fault; rs.faultStage := stage; rs.faultGpa := gpa
    rs.source := source.U
  }

  when(io.req.fire) {
    rq := in
    ctx := FenceKind.ctx(p, in.mode, in.vmid)
    rs.id := in.id
    answer(0.U, PageSize.Size4K.U, MmuFault.None.U, 0.U, 0.U, MmuSource.L1)
    when(badCmd) {
      rs.fault := MmuFault.Reserved.U
      state := S.Resp
    }.elsewhen(bare) {
      rs.pa := in.va(p.paBits - 1, 12)
      when(bareTooWide) { rs.pa := 0.U; rs.fault := MmuFault.Access.U }
      state := S.Resp
    }.elsewhen(!inRange) {
      state := S.WalkReq
    }.otherwise {
      state := firstLevel
    }
  }

  // ---- TLB lookups ------------------------------------------------------------------------------
  private val vpn = rq.va(p.vpnBits + 11, 12)
  private val s2only = rq.mode === TransMode.Stage2.U
  private def lookup(t: BabelFishTlb, go: Bool): Unit = {
    t.io.lookup_req.valid := go
    t.io.lookup_req.bits.vpn := vpn
    t.io.lookup_req.bits.pcid := Mux(s2only, 0.U, rq.asid)
    t.io.lookup_req.bits.ccid := Mux(s2only, 0.U, rq.ccid)
    t.io.lookup_req.bits.vmid := ctx
    t.io.lookup_req.bits.pcIdx := rq.pcIdx
    t.io.lookup_req.bits.pcIdxValid := rq.pcIdxValid
    t.io.lookup_req.bits.cmd := rq.cmd
    t.io.lookup_req.bits.user := rq.priv
  }
  lookup(l1, state === S.L1Req)
  lookup(l2, state === S.L2Req)
  when(state === S.L1Req && l1.io.lookup_req.fire) { state := S.L1Wait }
  when(state === S.L2Req && l2.io.lookup_req.fire) { state := S.L2Wait }

  /** The architecture's check on a hit's permissions (guest AND host, as the walk answered). */
  private def denies(perm: Perm): Bool = {
    val host = Wire(new Perm)
    host := perm
    host.u := true.B // a cached host permission has U (a G-stage leaf without U never fills)
    val s1 = PrivCheck.stage1(p.g.family, rq.cmd, rq.priv, rq.mode === TransMode.Both.U, rq.flags, perm)
    // (the HS-level MXR, as the walker's host check applies it to the data access: a hit
    // answers as the walk would)
    val s2 = PrivCheck.stage2(p.h.family, rq.cmd, rq.flags, host)
    MuxLookup(rq.mode, true.B)(Seq(
      TransMode.Stage1.U -> s1, TransMode.Stage2.U -> s2, TransMode.Both.U -> (s1 || s2)))
  }
  private val isWrite = rq.cmd === AccessCmd.Write.U
  private def usable(r: LookupResp): Bool = r.hit && !denies(r.perm) && !(isWrite && !r.dirty)
  private def hitButDenied(r: LookupResp): Bool = r.hit && denies(r.perm)
  private def hitButClean(r: LookupResp): Bool = r.hit && !denies(r.perm) && isWrite && !r.dirty

  private val l1r = l1.io.lookup_resp
  private val l2r = l2.io.lookup_resp
  private val l1Answer = state === S.L1Wait && l1r.valid
  private val l2Answer = state === S.L2Wait && l2r.valid
  when(l1Answer) {
    when(usable(l1r.bits)) {
      answer(l1r.bits.ppn, l1r.bits.pageSize, MmuFault.None.U, 0.U, 0.U, MmuSource.L1)
      state := S.Resp
    }.otherwise {
      state := Mux(csr.l2Enable, S.L2Req, S.WalkReq)
    }
  }
  when(l2Answer) {
    when(usable(l2r.bits)) {
      answer(l2r.bits.ppn, l2r.bits.pageSize, MmuFault.None.U, 0.U, 0.U, MmuSource.L2)
      fillPpn := l2r.bits.ppn; fillSize := l2r.bits.pageSize; fillPerm := l2r.bits.perm; fillDirty := l2r.bits.dirty
      fillL1 := csr.l1Enable
      fillL2 := false.B
      state := S.Fill
    }.otherwise {
      state := S.WalkReq
    }
  }

  // ---- walk -------------------------------------------------------------------------------------
  walker.io.req.valid := state === S.WalkReq
  walker.io.req.bits.id := 0.U
  walker.io.req.bits.gva := rq.va
  walker.io.req.bits.asid := rq.asid
  // stage-1-only walks carry vmid 0 (the Fences table flushes them as VM 0's)
  walker.io.req.bits.vmid := Mux(rq.mode === TransMode.Stage1.U, 0.U, rq.vmid)
  walker.io.req.bits.gRoot := rq.s1Root
  walker.io.req.bits.hRoot := rq.s2Root
  walker.io.req.bits.cmd := rq.cmd
  walker.io.req.bits.user := rq.priv
  walker.io.req.bits.mode := rq.mode
  walker.io.req.bits.flags := rq.flags
  when(walker.io.req.fire) { state := S.WalkWait }

  private val wr = walker.io.resp
  wr.ready := state === S.WalkWait
  when(wr.fire) {
    when(wr.bits.fault === Fault.None.U) {
      // a 512 GiB leaf is answered and filled as its 1 GiB part (docs M7, decided): the TLBs
      // hold 4K / 2M / 1G only, and a walk and a later hit answer the same size
      val size = PageSize.atMost1G(wr.bits.pageSize)
      answer(wr.bits.ppn, size, MmuFault.None.U, 0.U, 0.U, MmuSource.Walk)
      fillPpn := wr.bits.ppn; fillSize := size; fillPerm := wr.bits.perm
      // a write walk set D (hardware A/D) or found it set (fault mode); after a read it is unknown
      fillDirty := isWrite
      fillL1 := csr.l1Enable
      fillL2 := csr.l2Enable
      state := S.Fill
    }.otherwise {
      val kind = MuxLookup(wr.bits.fault, MmuFault.Reserved.U)(Seq(
        Fault.Guest.U -> MmuFault.Page.U,
        Fault.Host.U -> MmuFault.GuestPage.U,
        Fault.Bus.U -> MmuFault.Access.U,
        Fault.Reserved.U -> MmuFault.Reserved.U,
        // fault 5: a guest address (stage 0) is a page fault, a GPA out of range a guest-page fault
        Fault.Range.U -> Mux(wr.bits.faultStage === 0.U, MmuFault.Page.U, MmuFault.GuestPage.U)))
      answer(0.U, PageSize.Size4K.U, kind, wr.bits.faultStage, wr.bits.faultGpa, MmuSource.Walk)
      state := S.Resp
    }
  }

  // ---- fills ------------------------------------------------------------------------------------
  private def fill(t: BabelFishTlb, go: Bool): Unit = {
    t.io.fill.valid := go
    val f = t.io.fill.bits
    f.vpn := vpn
    // the TLB takes a superpage's base frame (low bits set would be counted as a bad fill)
    f.ppn := PageSize.align(fillPpn, fillSize)
    f.pageSize := fillSize
    f.perm := fillPerm
    f.dirty := fillDirty
    f.global := s2only
    f.pcid := Mux(s2only, 0.U, rq.asid)
    f.ccid := Mux(s2only, 0.U, rq.ccid)
    f.vmid := ctx
    f.own := true.B
    f.pc := 0.U
  }
  fill(l1, state === S.Fill && fillL1)
  fill(l2, state === S.Fill && fillL2)
  when(l1.io.fill.fire) { fillL1 := false.B }
  when(l2.io.fill.fire) { fillL2 := false.B }
  when(state === S.Fill && (!fillL1 || l1.io.fill.ready) && (!fillL2 || l2.io.fill.ready)) { state := S.Resp }

  // ---- response ---------------------------------------------------------------------------------
  io.resp.valid := state === S.Resp
  io.resp.bits := rs
  when(io.resp.fire) { state := S.Idle }

  // ---- fences -----------------------------------------------------------------------------------
  private val plan = Reg(new FencePlan(p))
  private val fenceReg = Reg(new MmuFence(p))
  private val invIdx = RegInit(0.U(1.W))
  private val l1Sent = RegInit(false.B)
  private val l2Sent = RegInit(false.B)
  private val flushSent = RegInit(false.B)
  when(io.fence.fire) {
    plan := FencePlan(p, io.fence.bits)
    fenceReg := io.fence.bits
    invIdx := 0.U
    l1Sent := false.B; l2Sent := false.B; flushSent := false.B
    state := S.FenceInv
  }
  private val inv = plan.inv(invIdx)
  private val sending = state === S.FenceInv
  for ((t, sent) <- Seq((l1, l1Sent), (l2, l2Sent))) {
    t.io.inval.valid := sending && !sent
    t.io.inval.bits.kind := inv.kind
    t.io.inval.bits.vpn := fenceReg.vpn
    t.io.inval.bits.pcid := fenceReg.asid
    t.io.inval.bits.ccid := fenceReg.ccid
    t.io.inval.bits.vmid := inv.ctx
    when(t.io.inval.fire) { sent := true.B }
  }
  walker.io.flush.valid := sending && invIdx === 0.U && plan.flushValid && !flushSent
  walker.io.flush.bits.kind := plan.flushKind
  walker.io.flush.bits.vmid := plan.flushVmid
  walker.io.flush.bits.asid := fenceReg.asid
  when(walker.io.flush.fire) { flushSent := true.B }
  private val allSent = (l1Sent || l1.io.inval.fire) && (l2Sent || l2.io.inval.fire) &&
    (flushSent || walker.io.flush.fire || !walker.io.flush.valid)
  when(sending && allSent) { state := S.FenceWait }
  // a TLB is ready for an invalidation again once the previous one has landed (its write
  // shadow and, with SRAM, its sweep are over): then nothing it removed can answer
  when(state === S.FenceWait && l1.io.inval.ready && l2.io.inval.ready) {
    when(invIdx === 0.U && plan.inv(1).valid) {
      invIdx := 1.U
      l1Sent := false.B; l2Sent := false.B
      state := S.FenceInv
    }.otherwise {
      state := S.FenceDone
    }
  }
  io.fenceDone := state === S.FenceDone
  when(state === S.FenceDone) { state := S.Idle }

  // ---- dirty events to PmlLogger ------------------------------------------------------------------
  pml.io.dirty.valid := walker.io.dirty.valid
  walker.io.dirty.ready := pml.io.dirty.ready
  pml.io.dirty.bits.gpa := walker.io.dirty.bits.gpa
  pml.io.dirty.bits.gva := walker.io.dirty.bits.gva
  pml.io.dirty.bits.vmid := walker.io.dirty.bits.vmid
  pml.io.dirty.bits.asid := walker.io.dirty.bits.asid
  io.exit <> pml.io.exit
  io.guestIrq <> pml.io.guestIrq

  // ---- one memory port: walker (id top bit 0) and PmlLogger (1) ---------------------------------
  private val merge = new MemMerge(Seq(p.walker.idBits, p.pmlIdBits), p.paBits)
  require(merge.mergedIdBits == p.memIdBits)
  merge.connect(Seq(walker.io.mem_req, pml.io.mem_req), Seq(walker.io.mem_resp, pml.io.mem_resp), io.mem_req, io.mem_resp)

  // ---- CSR: PmlLogger below 0x8000, the MMU's window above (MmuCsr: answered in r + 2) ------------
  io.csr_req.ready := true.B
  pml.io.csr_req.valid := io.csr_req.valid && !io.csr_req.bits.addr(15)
  pml.io.csr_req.bits := io.csr_req.bits
  private val csrAccepted = Wire(Valid(new CsrReq))
  csrAccepted.valid := io.csr_req.fire
  csrAccepted.bits := io.csr_req.bits
  csr(csrAccepted, pml.io.csr_resp)
  io.csr_resp := csr.resp

  // ---- counters -----------------------------------------------------------------------------------
  private def faultOf(k: Int): Bool = io.resp.fire && rs.fault === k.U
  PerfCounters.connect(io.perf,
    "requests" -> PerfCounter(io.req.fire),
    "bare" -> PerfCounter(io.req.fire && bare && !badCmd),
    "l1Hits" -> PerfCounter(l1Answer && usable(l1r.bits)),
    "l2Hits" -> PerfCounter(l2Answer && usable(l2r.bits)),
    "walks" -> PerfCounter(walker.io.req.fire),
    "permMisses" -> PerfCounter((l1Answer && hitButDenied(l1r.bits)) || (l2Answer && hitButDenied(l2r.bits))),
    "dirtyMisses" -> PerfCounter((l1Answer && hitButClean(l1r.bits)) || (l2Answer && hitButClean(l2r.bits))),
    "rangeWalks" -> PerfCounter(io.req.fire && !badCmd && !bare && !inRange),
    "pageFaults" -> PerfCounter(faultOf(MmuFault.Page)),
    "guestPageFaults" -> PerfCounter(faultOf(MmuFault.GuestPage)),
    "accessFaults" -> PerfCounter(faultOf(MmuFault.Access)),
    "reservedFaults" -> PerfCounter(faultOf(MmuFault.Reserved)),
    "fences" -> PerfCounter(io.fence.fire),
    "badFences" -> PerfCounter(io.fence.fire && FenceKind.bad(io.fence.bits.kind)),
    "badCmds" -> PerfCounter(io.req.fire && badCmd),
    "badMemResps" -> PerfCounter(merge.badResp),
    "badCsrs" -> PerfCounter(csr.bad),
    "busyCycles" -> PerfCounter(!idle)
  )
  private val byBlock = Seq(MmuPerf.names.map(io.perf(_)), perfOf(l1), perfOf(l2),
    walker.io.perf.elements.values.toSeq, pml.io.perf.elements.values.toSeq)
  csrPerf.zip(byBlock).foreach { case (w, v) => w := VecInit(v) }

  private def perfOf(t: BabelFishTlb): Seq[UInt] = t.io.perf.elements.values.toSeq

  // ---- proof views (formal/mmu) -------------------------------------------------------------------
  io.dbg.foreach { d =>
    d.state := state.asUInt
    d.req := rq
    d.ctx := ctx
    for ((v, t) <- Seq((d.l1, l1), (d.l2, l2))) {
      ChannelView(v.lookup_req, t.io.lookup_req)
      ChannelView(v.lookup_resp, t.io.lookup_resp)
      ChannelView(v.fill, t.io.fill)
      ChannelView(v.inval, t.io.inval)
    }
    ChannelView(d.walk_req, walker.io.req)
    ChannelView(d.walk_resp, walker.io.resp)
    ChannelView(d.walk_flush, walker.io.flush)
    d.fence := fenceReg
    d.plan := plan
    d.fenceStep := invIdx
    d.l1Sent := l1Sent
    d.l2Sent := l2Sent
    d.flushSent := flushSent
  }
}
