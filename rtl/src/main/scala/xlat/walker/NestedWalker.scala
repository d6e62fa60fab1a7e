package xlat.walker

import chisel3._
import chisel3.util._
import xlat.common._

/** NestedWalker: two-dimensional page walks, a guest table over a host table, several in flight.
  *
  * ==Structure==
  * `walkers` walk slots ([[WalkSlot]]) share one step engine, one memory port, the A/D locks
  * (one per leaf address being updated) and three optional caches ([[AssocCache]]): the guest PWC (guest pointers by vmid, asid, level
  * and VA prefix), the host PWC (host pointers by vmid, level and GPA prefix) and the nested TLB
  * (host leaves, GPA page -> HPA page). Formats are data ([[PtFormat]]), so the same engine
  * walks x86-64 over EPT and Sv39 over Sv39x4.
  *
  * ==State machine (per slot, [[WalkState]])==
  * {{{
  * Start -> HostStart -> (nested TLB hit) ----------------------------+
  *              |  (miss: host PWC, then host levels)                 |
  *              +-> ReadHost -> MemWait -> HostEntry --(pointer)--> ReadHost
  *                                          | (leaf; A/D: Lock -> ReadLocked -> MemWait
  *                                          |   -> WriteAd -> MemWait -> Dirty)
  *                                          +-> HostLeafDone ---------+
  *   page-table access: ReadGuest -> MemWait -> GuestEntry <----------+
  *        pointer: -> HostStart (next guest level);  leaf (+A/D) -> GuestLeafDone -> HostStart
  *   data access: -> Done (response)
  * }}}
  * Engine states take one turn of the step engine (one slot at a time; each turn does at most
  * one cache lookup or fill); the engine's choice is registered (a round robin picks the slot
  * served in the next cycle). A lookup turn is three cycles on the same slot: match
  * (every entry compared, hit vectors registered), select (the deepest registered hit still
  * valid, its entry's fields registered), then the turn (the slot's next registers); the hit's pin / PLRU / re-reference update and a fill
  * land one cycle after their turn (AssocCache `late`; a flush in that cycle drops the fill).
  * Each slot's turn is computed from its own registers every cycle (per-slot precomputation);
  * the served slot loads its own, so no 1-of-walkers multiplexer sits in front of a turn.
  * Issue states take
  * the memory port (round robin); a
  * slot has at most one access outstanding and tags it with its request id.
  *
  * ==Caches and flushes==
  * A fill is provisional until its walk answers; a walk that ends in a bus error drops its
  * fills. A flush invalidates what it names in one cycle and stops every walk in flight from
  * filling, so no entry older than the flush survives it.
  *
  * See docs/nested-walker.md for every rule, fault and port.
  */
class NestedWalker(val p: WalkerParams) extends Module {
  override def desiredName = "NestedWalker"

  val io = FlatIO(new Bundle {
    val req = Flipped(Decoupled(new WalkReq(p)))
    val resp = Decoupled(new WalkResp(p))
    val mem_req = Decoupled(new MemReq(p.idBits, p.paBits))
    val mem_resp = Flipped(Decoupled(new MemResp(p.idBits)))
    val dirty = Decoupled(new DirtyEvent(p))
    val flush = Flipped(Decoupled(new WalkerFlush(p)))
    val perf = Output(new PerfCounters(WalkerPerf.names))
    val dbg = if (p.formalPorts) Some(Output(new WalkerDbg(p))) else None
  })

  import WalkState._
  private val g = p.g
  private val h = p.h
  private val W = p.walkers

  // ---- address helpers ----------------------------------------------------------------------
  /** Keeps the page-number bits above a leaf (or pointer) at `level`: clears the low 9 * level. */
  private def keep(level: UInt, width: Int): UInt = {
    val all = (BigInt(1) << width) - 1
    MuxLookup(level, all.U(width.W))(
      (1 to 3).map(l => l.U -> (all & ~((BigInt(1) << (9 * l).min(width)) - 1)).U(width.W))
    )
  }
  /** The 4 KiB frame of page number `pn` inside the page of `level` based at `base`. */
  private def frame(base: UInt, level: UInt, pn: UInt): UInt = {
    val k = keep(level, base.getWidth)
    (base & k) | (pn.pad(base.getWidth)(base.getWidth - 1, 0) & ~k)
  }
  /** An OR, not a sum: the index never reaches into the table's bits (a 9-bit index spans
    * bits 11:3; an x4 root's 11-bit index spans bits 13:3 over a root whose low 2 page bits
    * are 0, see hRootDrop). */
  private def entryAddr(table: UInt, index: UInt, width: Int): UInt =
    ((table << 12) | (index << 3)).pad(width)(width - 1, 0)
  private def allPerm: Perm = { val a = Wire(new Perm); a.r := true.B; a.w := true.B; a.x := true.B; a.u := true.B; a }
  private def andPerm(a: Perm, b: Perm): Perm = {
    val c = Wire(new Perm); c.r := a.r && b.r; c.w := a.w && b.w; c.x := a.x && b.x; c.u := a.u && b.u; c
  }
  private def inGpaRange(t: UInt): Bool = if (p.targetBits > p.gpaBits) !t(p.targetBits - 1, p.gpaBits).orR else true.B
  private def gpnOf(t: UInt): UInt = t(p.gpaBits - 1, 12)
  private def isCmd(c: UInt, k: Int): Bool = c === k.U
  /** Host permission check of an access: a write needs W, a fetch X, a read R. */
  private def hostDenies(perm: Perm, write: Bool, fetch: Bool): Bool = Mux(write, !perm.w, Mux(fetch, !perm.x, !perm.r))
  private def guestDenies(perm: Perm, cmd: UInt, user: Bool): Bool =
    (user && !perm.u) || (isCmd(cmd, AccessCmd.Read) && !perm.r) || (isCmd(cmd, AccessCmd.Write) && !perm.w) ||
      (isCmd(cmd, AccessCmd.Exec) && !perm.x)

  // ---- slots -------------------------------------------------------------------------------
  private val state = RegInit(VecInit(Seq.fill(W)(Idle)))
  private val slot = Reg(Vec(W, new WalkSlot(p)))
  private val busy = state.map(_ =/= Idle)

  // ---- caches ------------------------------------------------------------------------------
  // Keys: two entries with the same key cover the same addresses (a fill of one refreshes the other).
  private def samePrefix(a: UInt, b: UInt, level: UInt): Bool = ((a ^ b) & keep(level, a.getWidth)) === 0.U
  private val gpwc = Option.when(p.guestPwcEntries > 0)(
    new AssocCache(new GuestPwcEntry(p), p.guestPwcEntries, p.slotBits, Some((a: GuestPwcEntry, b: GuestPwcEntry) =>
      a.vmid === b.vmid && a.asid === b.asid && a.level === b.level && samePrefix(a.vpn, b.vpn, a.level)), pins = true, reuse = true, late = true, keyIn = true, ahead = true, split = true, writeLate = true)
  )
  private val hpwc = Option.when(p.hostPwcEntries > 0)(
    new AssocCache(new HostPwcEntry(p), p.hostPwcEntries, p.slotBits, Some((a: HostPwcEntry, b: HostPwcEntry) =>
      a.vmid === b.vmid && a.level === b.level && samePrefix(a.gpn, b.gpn, a.level)), pins = true, reuse = true, late = true, keyIn = true, ahead = true, split = true, writeLate = true)
  )
  private val ntlb = Option.when(p.nestedTlbEntries > 0)(
    new AssocCache(new NestedTlbEntry(p), p.nestedTlbEntries, p.slotBits, Some((a: NestedTlbEntry, b: NestedTlbEntry) =>
      a.vmid === b.vmid && a.size === b.size && samePrefix(a.gpn, b.gpn, a.size)), pins = true, reuse = true, late = true, keyIn = true, ahead = true, split = true, writeLate = true)
  )

  private def anyOf(x: Seq[Bool]): Bool = VecInit(x).asUInt.orR
  /** The lowest set bit of `x` one-hot, each bit from one OR of the bits below it (no ripple). */
  private def firstOH(x: Seq[Bool]): Seq[Bool] = x.indices.map(i => x(i) && !(if (i == 0) false.B else anyOf(x.take(i))))
  /** The select of a lookup: `hitsR` the registered matches (per level with `levels`, one vector
    * otherwise), kept on entries still valid and not rewritten by the fill that landed in the
    * match cycle; the deepest level's (the walk then skips the most reads), then the
    * lowest-index entry. Returns hit, the entry (a one-hot AND-OR), its index and the hit's
    * level one-hot (levels 1.. in order).
    */
  private def select[T <: Data](c: AssocCache[T], hitsR: Seq[Vec[Bool]]): (Bool, T, UInt, Seq[Bool]) = {
    val at = hitsR.map(_.zip(c.valid).zip(c.wroteLast).map { case ((h, v), w) => h && v && !w })
    val any = at.map(anyOf)
    val lvOH = firstOH(any)
    val perLevel = at.map(firstOH)
    val eOH = (0 until c.n).map(j => anyOf(perLevel.zip(lvOH).map { case (o, l) => o(j) && l }))
    (anyOf(any), Mux1H(eOH, c.entries), OHToUInt(eOH), lvOH)
  }

  // ---- accept ------------------------------------------------------------------------------
  private val idInFlight = (0 until W).map(i => busy(i) && slot(i).id === io.req.bits.id).reduce(_ || _)
  private val free = state.map(_ === Idle)
  private val freeIdx = PriorityEncoder(free)
  io.req.ready := free.reduce(_ || _) && !idInFlight
  when(io.req.fire) {
    val r = io.req.bits
    val s = WireDefault(0.U.asTypeOf(new WalkSlot(p)))
    s.id := r.id; s.gva := r.gva; s.asid := r.asid; s.vmid := r.vmid; s.hRoot := r.hRoot >> p.hRootDrop; s.cmd := r.cmd
    s.user := r.user; s.gTable := r.gRoot; s.gLevel := g.topLevel.U; s.gPerm := allPerm
    slot(freeIdx) := s
    state(freeIdx) := Start
  }

  // ---- step engine -------------------------------------------------------------------------
  // The engine serves the slot `cur` chosen in the previous cycle (a registered choice: the
  // round robin over the slots' states runs beside the turn instead of in front of it). A slot
  // leaves an engine state only by its own turn, so a slot chosen in an engine state is still
  // in one when served; the slot being served is a candidate of the next choice too (it may go
  // on to another engine state, e.g. Start -> HostStart), last in the round-robin order, and if
  // its turn took it out of the engine states the cycle it is served in does nothing.
  private val engineStates = Seq(Start, HostStart, HostEntry, HostLeafDone, GuestEntry, GuestLeafDone)
  private val wantsEngine = VecInit(state.map(st => engineStates.map(_ === st).reduce(_ || _)))
  private val engine = new RoundRobin(W, hold = false)(wantsEngine)
  // Three-cycle lookup turns (`lookStates`: the engine states that look a cache up, when that
  // cache exists). The first cycle (match) compares the slot's key with every entry and
  // registers the hit vectors; the engine stays on that slot (`lookPhase`); the second cycle
  // (select) takes the deepest registered hit that is still valid and registers its entry's
  // fields, way and next level; the third (the turn) does the rest of the turn from those
  // registers. Nothing lands in the select or turn cycle (the engine is the only filler, held
  // on this slot, and a fill lands one cycle after its turn, in the match cycle at the latest),
  // so the registered fields are the data the entry was matched against; an invalidation
  // (flush, a bus-error walk's drop) in the match cycle removes the hit, one in the select or
  // turn cycle does not (the walk is in flight at it, as every such walk).
  private val lookStates = Seq(Start -> gpwc.isDefined, HostStart -> (ntlb.isDefined || hpwc.isDefined)).collect {
    case (k, true) => k
  }
  /** The lookup turn's phase: 1 in its select cycle, 2 in its turn cycle (0 otherwise). */
  private val lookPhase = RegInit(0.U(2.W))
  private val curValid = RegInit(false.B)
  private val cur = RegInit(0.U(p.slotBits.W))
  private val e = cur
  private val s = slot(e)
  private val st = state(e)
  /** `cur` one-hot with `curValid` folded in (the per-slot turn enables start from it). */
  private val curOH = (0 until W).map(i => curValid && cur === i.U)
  private def lookState(x: WalkState.Type): Bool = lookStates.map(_ === x).foldLeft(false.B)(_ || _)
  private val servedI = (0 until W).map(i => curOH(i) && wantsEngine(i))
  private val matchI = (0 until W).map(i => servedI(i) && lookPhase === 0.U && lookState(state(i)))
  private val selectI = (0 until W).map(i => servedI(i) && lookPhase === 1.U)
  /** Slot i takes the last (or only) cycle of its turn. */
  private val goI = (0 until W).map(i => servedI(i) && (lookPhase === 2.U || !lookState(state(i))))
  private val matchTurn = anyOf(matchI)
  private val selectTurn = anyOf(selectI)
  lookPhase := Mux(matchTurn, 1.U, Mux(selectTurn, 2.U, 0.U))
  when(matchTurn || selectTurn) { curValid := true.B }
    .otherwise {
      curValid := engine.valid
      cur := engine.index
      when(engine.valid) { engine.granted() }
    }
  /** Which cache operations a slot's turn asks for (before `go`: the served slot's count). */
  private class TurnOps extends Bundle {
    val useG, useH, useT, fillG, fillH, fillT = Bool()
  }
  private case class Turn(next: WalkSlot, state: WalkState.Type, ops: TurnOps, gx: GuestPwcEntry, hx: HostPwcEntry, tx: NestedTlbEntry)
  private val filled = WireDefault(false.B)
  private val gpwcHit, hpwcHit, ntlbHit = WireDefault(false.B)

  private def gvpnOf(x: WalkSlot): UInt = x.gva(g.inputBits - 1, 12)
  private def hostWriteOf(x: WalkSlot): Bool = Mux(x.forData, isCmd(x.cmd, AccessCmd.Write), p.hardwareAd.B)
  private val hostWrite = hostWriteOf(s)
  // the served slot's page numbers, selected as such (not whole registers, of which the
  // lookups use only these bits)
  private val gvpn = VecInit(slot.map(gvpnOf))(e)

  // Match stage: the served slot's keys against every entry, registered every cycle (read only
  // in the select cycle that follows a match turn, where the engine still serves that slot).
  private val gpnKey = VecInit(slot.map(x => gpnOf(x.target)))(e)
  // (pointer caches: one vector per level, so the select finds the deepest level without
  // reading the entries' levels)
  private val gpwcHitsR = gpwc.map(c => (1 to g.topLevel).map(l => RegNext(VecInit(c.entries.map { x =>
    x.vmid === s.vmid && x.asid === s.asid && ((x.vpn ^ gvpn) & keep(x.level, x.vpn.getWidth)) === 0.U && x.level === l.U
  }))))
  private val ntlbHitsR = ntlb.map(c => RegNext(VecInit(c.entries.map { x =>
    x.vmid === s.vmid && ((x.gpn ^ gpnKey) & keep(x.size, x.gpn.getWidth)) === 0.U && !(hostWrite && !x.d)
  })))
  private val hpwcHitsR = hpwc.map(c => (1 to h.topLevel).map(l => RegNext(VecInit(c.entries.map { x =>
    x.vmid === s.vmid && ((x.gpn ^ gpnKey) & keep(x.level, x.gpn.getWidth)) === 0.U && x.level === l.U
  }))))
  // The select stage's choices, once for every slot (they depend on no slot register); a
  // pointer hit at level l continues at l - 1 (from the level one-hot, not the entry).
  private def below(lvOH: Seq[Bool]): UInt = Mux1H(lvOH, lvOH.indices.map(_.U(p.levelBits.W)))
  // The select's results are registered (every cycle; the turn reads them only in the cycle
  // after its select): the turn starts from registers, not from the hit vectors' AND-OR.
  private val gSelC = gpwc.map { c => val (a, b, w, l) = select(c, gpwcHitsR.get); (a, b, w, below(l)) }
  private val tSelC = ntlb.map(c => select(c, Seq(ntlbHitsR.get)))
  private val pSelC = hpwc.map { c => val (a, b, w, l) = select(c, hpwcHitsR.get); (a, b, w, below(l)) }
  private val (gSelHit, gSelEnt, gSelWay, gSelNext) = gSelC match {
    case Some((a, b, w, l)) => (RegNext(a), RegNext(b), RegNext(w), RegNext(l))
    case None               => (false.B, 0.U.asTypeOf(new GuestPwcEntry(p)), 0.U, 0.U)
  }
  private val (tSelHit, tSelEnt, tSelWay) = tSelC match {
    case Some((a, b, w, _)) => (RegNext(a), RegNext(b), RegNext(w))
    case None               => (false.B, 0.U.asTypeOf(new NestedTlbEntry(p)), 0.U)
  }
  private val (pSelHit, pSelEnt, pSelWay, pSelNext) = pSelC match {
    case Some((a, b, w, l)) => (RegNext(a), RegNext(b), RegNext(w), RegNext(l))
    case None               => (false.B, 0.U.asTypeOf(new HostPwcEntry(p)), 0.U, 0.U)
  }

  // The fill keys' compares with every entry (AssocCache keyIn) on the served slot's key
  // fields (raw slot registers: only the slot multiplexer is in front of them).
  private val sameG = gpwc.map { c =>
    val k = WireDefault(0.U.asTypeOf(new GuestPwcEntry(p)))
    k.vmid := s.vmid; k.asid := s.asid; k.level := s.gLevel; k.vpn := gvpn
    c.sameKeyAs(k)
  }
  private val sameH = hpwc.map { c =>
    val k = WireDefault(0.U.asTypeOf(new HostPwcEntry(p)))
    k.vmid := s.vmid; k.level := s.hLevel; k.gpn := gpnKey
    c.sameKeyAs(k)
  }
  private val sameT = ntlb.map { c =>
    val k = WireDefault(0.U.asTypeOf(new NestedTlbEntry(p)))
    k.vmid := s.vmid; k.size := s.hLevel(1, 0); k.gpn := gpnKey
    c.sameKeyAs(k)
  }

  /** One engine turn of slot `i` (registers `s`, state `st`), computed for every slot from its
    * own registers (per-slot precomputation: no 1-of-walkers multiplexer in front of a turn):
    * its next registers and state, which the served slot loads, and, when `go` (slot `i` is
    * served), the turn's cache operations and hit flags.
    */
  private def turnOf(s: WalkSlot, st: WalkState.Type, i: Int, go: Bool): Turn = {
    val n = WireDefault(s)
    val nst = WireDefault(st)
    val canFill = !s.noFill && !io.flush.fire
    val ops = Wire(new TurnOps)
    ops := 0.U.asTypeOf(ops)
    def fault(code: Int, stage: Int, level: UInt, gpa: UInt): Unit = {
      // `gpa` is always the slot's `target` (0 in Start, where it is not set yet): the response
      // reads `faultGpa` from `target`, no register of its own (no enable behind the turn)
      n.fault := code.U; n.faultStage := stage.U; n.faultLevel := level; nst := Done
    }
    /** The host translated `target` to frame `hpn`: read the guest entry there, or answer. */
    def hostDone(hpn: UInt, size: UInt, perm: Perm): Unit = {
      n.hSize := size; n.hPerm := perm
      when(s.forData) { n.ppn := hpn; nst := Done }
        .otherwise { n.pteAddr := Cat(hpn, s.target(11, 0)); nst := ReadGuest }
    }
    val hostWrite = hostWriteOf(s)
    val hostFetch = s.forData && isCmd(s.cmd, AccessCmd.Exec)
    val hostRoot = if (p.hRootDrop > 0) Cat(s.hRoot, 0.U(p.hRootDrop.W)) else s.hRoot
    val gvpn = gvpnOf(s)
    val gEntry = g.decode(s.pte, s.gLevel, 64)
    val hEntry = h.decode(s.pte, s.hLevel, p.paBits)
    switch(st) {
      is(Start) {
        when(isCmd(s.cmd, AccessCmd.Reserved)) { fault(Fault.Reserved, 0, 0.U, 0.U) }
          .elsewhen(!g.inRange(s.gva)) { fault(Fault.Range, 0, g.topLevel.U, 0.U) }
          .otherwise {
            val (hit, ent, way) = (gSelHit, gSelEnt, gSelWay)
            val level = Mux(hit, gSelNext, g.topLevel.U)
            val table = Mux(hit, ent.table, s.gTable)
            when(hit) { ops.useG := true.B }
            when(go && hit) { gpwcHit := true.B }
            n.gLevel := level; n.gTable := table; n.gPerm := Mux(hit, ent.perm, allPerm)
            n.target := entryAddr(table, g.index(s.gva, level), p.targetBits); n.forData := false.B
            nst := HostStart
          }
      }
      is(HostStart) {
        val gpn = gpnOf(s.target)
        val (tHit, tEnt, tWay) = (tSelHit, tSelEnt, tSelWay)
        val (pHit, pEnt, pWay) = (pSelHit, pSelEnt, pSelWay)
        when(!inGpaRange(s.target)) { fault(Fault.Range, 1, h.topLevel.U, s.target) }
          .elsewhen(tHit) {
            ops.useT := true.B
            when(go) { ntlbHit := true.B }
            n.hLevel := tEnt.size
            when(hostDenies(tEnt.perm, hostWrite, hostFetch)) { fault(Fault.Host, 1, tEnt.size, s.target) }
              .otherwise { hostDone(frame(tEnt.base, tEnt.size, gpn), tEnt.size, tEnt.perm) }
          }
          .otherwise {
            when(pHit) { ops.useH := true.B }
            when(go && pHit) { hpwcHit := true.B }
            val level = Mux(pHit, pSelNext, h.topLevel.U)
            val table = Mux(pHit, pEnt.table, hostRoot)
            n.hLevel := level; n.hPerm := Mux(pHit, pEnt.perm, allPerm)
            n.pteAddr := entryAddr(table, h.index(s.target, level), p.paBits)
            nst := ReadHost
          }
      }
      is(HostEntry) {
        val acc = h.accumulate(s.hPerm, hEntry.perm, hEntry.leaf)
        val table = hEntry.ppn(p.paBits - 13, 0)
        when(s.memErr) { fault(Fault.Bus, 1, s.hLevel, s.target) }
          .elsewhen(!hEntry.valid) { fault(Fault.Host, 1, s.hLevel, s.target) }
          .elsewhen(hEntry.reserved) { fault(Fault.Reserved, 1, s.hLevel, s.target) }
          .elsewhen(hEntry.pageFault) { fault(Fault.Host, 1, s.hLevel, s.target) }
          .elsewhen(!hEntry.leaf) {
            ops.fillH := canFill
            n.hLevel := s.hLevel - 1.U; n.hPerm := acc
            n.pteAddr := entryAddr(table, h.index(s.target, s.hLevel - 1.U), p.paBits)
            nst := ReadHost
          }
          .otherwise {
            n.hPerm := acc
            n.leafD := hEntry.d
            val userDenied = h.userRequired.B && !hEntry.perm.u
            when(userDenied || hostDenies(acc, hostWrite, hostFetch)) { fault(Fault.Host, 1, s.hLevel, s.target) }
              .elsewhen(!hEntry.a || (hostWrite && !hEntry.d)) {
                if (p.hardwareAd) { n.adHost := true.B; n.adNeedD := hostWrite; nst := Lock }
                else fault(Fault.Host, 1, s.hLevel, s.target)
              }
              .otherwise { nst := HostLeafDone }
          }
      }
      is(HostLeafDone) {
        val base = hEntry.ppn(p.paBits - 13, 0) & keep(s.hLevel, p.paBits - 12)
        val gpn = gpnOf(s.target)
        ops.fillT := canFill
        hostDone(frame(base, s.hLevel, gpn), s.hLevel, s.hPerm)
      }
      is(GuestEntry) {
        val acc = g.accumulate(s.gPerm, gEntry.perm, gEntry.leaf)
        val table = gEntry.ppn(g.ppnWidth - 1, 0)
        when(s.memErr) { fault(Fault.Bus, 0, s.gLevel, s.target) }
          .elsewhen(!gEntry.valid) { fault(Fault.Guest, 0, s.gLevel, s.target) }
          .elsewhen(gEntry.reserved) { fault(Fault.Reserved, 0, s.gLevel, s.target) }
          .elsewhen(gEntry.pageFault) { fault(Fault.Guest, 0, s.gLevel, s.target) }
          .elsewhen(!gEntry.leaf) {
            ops.fillG := canFill
            n.gLevel := s.gLevel - 1.U; n.gTable := table; n.gPerm := acc
            n.target := entryAddr(table, g.index(s.gva, s.gLevel - 1.U), p.targetBits); n.forData := false.B
            nst := HostStart
          }
          .otherwise {
            n.gPerm := acc
            when(guestDenies(acc, s.cmd, s.user)) { fault(Fault.Guest, 0, s.gLevel, s.target) }
              .elsewhen(!gEntry.a || (isCmd(s.cmd, AccessCmd.Write) && !gEntry.d)) {
                if (p.hardwareAd) { n.adHost := false.B; n.adNeedD := isCmd(s.cmd, AccessCmd.Write); nst := Lock }
                else fault(Fault.Guest, 0, s.gLevel, s.target)
              }
              .otherwise { nst := GuestLeafDone }
          }
      }
      is(GuestLeafDone) {
        val base = gEntry.ppn(g.ppnWidth - 1, 0)
        n.target := Cat(frame(base, s.gLevel, gvpn), s.gva(11, 0)).pad(p.targetBits)
        n.forData := true.B
        n.gSize := s.gLevel
        nst := HostStart
      }
    }
    // The entries this slot's turn would fill, from its own registers (whether it fills is
    // `ops`): selected by the registered `cur` (an AND-OR), not through the turn's conditions.
    val gx = Wire(new GuestPwcEntry(p))
    gx.vmid := s.vmid; gx.asid := s.asid; gx.level := s.gLevel; gx.vpn := gvpn
    gx.table := gEntry.ppn(g.ppnWidth - 1, 0); gx.perm := g.accumulate(s.gPerm, gEntry.perm, gEntry.leaf)
    val hx = Wire(new HostPwcEntry(p))
    hx.vmid := s.vmid; hx.level := s.hLevel; hx.gpn := gpnOf(s.target)
    hx.table := hEntry.ppn(p.paBits - 13, 0); hx.perm := h.accumulate(s.hPerm, hEntry.perm, hEntry.leaf)
    val tx = Wire(new NestedTlbEntry(p))
    tx.vmid := s.vmid; tx.size := s.hLevel(1, 0); tx.gpn := gpnOf(s.target)
    tx.base := hEntry.ppn(p.paBits - 13, 0) & keep(s.hLevel, p.paBits - 12); tx.perm := s.hPerm; tx.d := s.leafD
    Turn(n, nst, ops, gx, hx, tx)
  }

  private val turns = (0 until W).map(i => turnOf(slot(i), state(i), i, goI(i)))
  private val turn = anyOf(goI)
  for (i <- 0 until W) {
    when(goI(i)) { slot(i) := turns(i).next; state(i) := turns(i).state }
  }
  /** The served slot's cache operations: the data every cycle from `cur`, the enables from its turn. */
  private def served(f: TurnOps => Bool): Bool = anyOf((0 until W).map(i => goI(i) && f(turns(i).ops)))
  private val fills = Seq(served(_.fillG), served(_.fillH), served(_.fillT))
  filled := fills.reduce(_ || _)
  gpwc.foreach { c =>
    c.fillBits(Mux1H(curOH, turns.map(_.gx)), cur, sameG.get); when(fills(0)) { c.fillGo() }
    c.useBits(gSelWay, cur); when(served(_.useG)) { c.useGo() }
  }
  hpwc.foreach { c =>
    c.fillBits(Mux1H(curOH, turns.map(_.hx)), cur, sameH.get); when(fills(1)) { c.fillGo() }
    c.useBits(pSelWay, cur); when(served(_.useH)) { c.useGo() }
  }
  ntlb.foreach { c =>
    c.fillBits(Mux1H(curOH, turns.map(_.tx)), cur, sameT.get); when(fills(2)) { c.fillGo() }
    c.useBits(tSelWay, cur); when(served(_.useT)) { c.useGo() }
  }

  // ---- memory port -------------------------------------------------------------------------
  private val issueStates = Seq(ReadHost, ReadGuest, ReadLocked, WriteAd)
  // (the round robin's one-hot choice selects the slot's fields by an AND-OR and loads the
  // chosen slot's own registers: no index decode behind the choice)
  private val mem = new RoundRobin(W, fast = true)(state.map(st => issueStates.map(_ === st).reduce(_ || _)))
  private val slotWrite = state.map(_ === WriteAd)
  private val mWrite = Mux1H(mem.oneHot, slotWrite)
  private val ms = Mux1H(mem.oneHot, slot)
  io.mem_req.valid := mem.valid
  io.mem_req.bits.id := ms.id
  io.mem_req.bits.addr := ms.pteAddr
  io.mem_req.bits.write := mWrite
  io.mem_req.bits.wdata := Mux(mWrite, ms.adData, 0.U)
  io.mem_req.bits.wmask := Mux(mWrite, Mux(ms.adHost, (1 << h.adByte).U, (1 << g.adByte).U), 0.U)
  when(io.mem_req.fire) { mem.granted() }
  for (i <- 0 until W) when(io.mem_req.ready && mem.oneHot(i)) {
    state(i) := MemWait
    slot(i).memKind := MuxLookup(state(i).asUInt, MemKind.Write.U)(
      Seq(
        ReadHost.asUInt -> MemKind.HostEntry.U,
        ReadGuest.asUInt -> MemKind.GuestEntry.U,
        ReadLocked.asUInt -> MemKind.Locked.U
      )
    )
    when(slotWrite(i)) { slot(i).memWrites := slot(i).memWrites + 1.U }.otherwise { slot(i).memReads := slot(i).memReads + 1.U }
  }

  // ---- A/D locks: one read-modify-write of a leaf address at a time ---------------------------
  // A slot holds the lock of its `pteAddr` from the grant to the end of its read-modify-write;
  // a waiting slot is granted when no holder has its address (one grant a cycle, so two waiters
  // of one address are never granted together).
  private val holds = (0 until W).map { i =>
    state(i) === ReadLocked || state(i) === WriteAd ||
    (state(i) === MemWait && (slot(i).memKind === MemKind.Locked.U || slot(i).memKind === MemKind.Write.U))
  }
  private val lockFree = (0 until W).map { i =>
    (0 until W).filter(_ != i).map(j => !(holds(j) && slot(j).pteAddr === slot(i).pteAddr)).foldLeft(true.B)(_ && _)
  }
  private val lock = new RoundRobin(W)((0 until W).map(i => state(i) === Lock && lockFree(i)))
  when(lock.valid) {
    lock.granted()
    state(lock.index) := ReadLocked
  }

  // ---- memory responses (always accepted: each slot keeps its own entry register) ----------
  io.mem_resp.ready := true.B
  private val r = io.mem_resp.bits
  private val respSlot = (0 until W).map(i => io.mem_resp.valid && state(i) === MemWait && slot(i).id === r.id)
  for (i <- 0 until W) {
    val sl = slot(i)
    val aBit = Mux(sl.adHost, (BigInt(1) << h.aBit).U(64.W), (BigInt(1) << g.aBit).U(64.W))
    val dBit = Mux(sl.adHost, (BigInt(1) << h.dBit).U(64.W), (BigInt(1) << g.dBit).U(64.W))
    val need = aBit | Mux(sl.adNeedD, dBit, 0.U)
    val hasA = Mux(sl.adHost, r.rdata(h.aBit), r.rdata(g.aBit))
    val hasD = Mux(sl.adHost, r.rdata(h.dBit), r.rdata(g.dBit))
    val resume = Mux(sl.adHost, HostLeafDone, GuestLeafDone)
    val level = Mux(sl.adHost, sl.hLevel, sl.gLevel)
    def busFault(): Unit = {
      sl.fault := Fault.Bus.U; sl.faultStage := sl.adHost.asUInt; sl.faultLevel := level
      state(i) := Done
    }
    when(respSlot(i)) {
      switch(sl.memKind) {
        is(MemKind.HostEntry.U) { sl.pte := r.rdata; sl.memErr := r.error; state(i) := HostEntry }
        is(MemKind.GuestEntry.U) { sl.pte := r.rdata; sl.memErr := r.error; state(i) := GuestEntry }
        is(MemKind.Locked.U) {
          when(r.error) { busFault() }
            .otherwise {
              sl.leafD := sl.leafD || sl.adNeedD
              when(hasA && (hasD || !sl.adNeedD)) { state(i) := resume }
                .otherwise {
                  sl.adData := r.rdata | need
                  sl.dirtyOnWrite := sl.adHost && sl.adNeedD && !hasD
                  state(i) := WriteAd
                }
            }
        }
        is(MemKind.Write.U) {
          when(r.error) { busFault() }.otherwise { state(i) := Mux(sl.dirtyOnWrite, Dirty, resume) }
        }
      }
    }
  }

  // ---- dirty events --------------------------------------------------------------------------
  private val dirtyPick = new RoundRobin(W, fast = true)(state.map(_ === Dirty))
  private val ds = slot(dirtyPick.index)
  io.dirty.valid := dirtyPick.valid
  // Select the page numbers, not whole registers, so no slot bit is left dangling.
  io.dirty.bits.gpa := VecInit(slot.map(x => gpnOf(x.target)))(dirtyPick.index)
  io.dirty.bits.gva := VecInit(slot.map(_.gva(63, 12)))(dirtyPick.index)
  io.dirty.bits.vmid := ds.vmid
  io.dirty.bits.asid := ds.asid
  io.dirty.bits.pageTable := !ds.forData
  when(io.dirty.fire) { dirtyPick.granted(); state(dirtyPick.index) := HostLeafDone }

  // ---- responses -----------------------------------------------------------------------------
  private val respPick = new RoundRobin(W, fast = true)(state.map(_ === Done))
  // The answered slot's fields by the choice one-hot (an AND-OR, no index decode behind the
  // round robin); a slot's bus error is known from its own register, so the caches' drop and
  // confirm are per owner (`dropMask`): each entry looks up its own owner's bit.
  private val rs = Mux1H(respPick.oneHot, slot)
  private val ok = rs.fault === Fault.None.U
  private val respBus = slot.map(_.fault === Fault.Bus.U)
  private val respFireOH = (0 until W).map(i => io.resp.ready && respPick.oneHot(i))
  io.resp.valid := respPick.valid
  io.resp.bits.id := rs.id
  io.resp.bits.fault := rs.fault
  io.resp.bits.faultLevel := rs.faultLevel
  io.resp.bits.faultStage := rs.faultStage
  io.resp.bits.faultGpa := Mux(ok, 0.U, rs.target.pad(64))
  io.resp.bits.ppn := Mux(ok, rs.ppn, 0.U)
  io.resp.bits.guestPageSize := Mux(ok, rs.gSize(1, 0), 0.U)
  io.resp.bits.hostPageSize := Mux(ok, rs.hSize(1, 0), 0.U)
  io.resp.bits.pageSize := Mux(ok, Mux(rs.gSize < rs.hSize, rs.gSize, rs.hSize)(1, 0), 0.U)
  io.resp.bits.perm := Mux(ok, andPerm(rs.gPerm, rs.hPerm), 0.U.asTypeOf(new Perm))
  io.resp.bits.memReads := rs.memReads
  io.resp.bits.memWrites := rs.memWrites
  when(io.resp.fire) { respPick.granted() }
  for (i <- 0 until W) when(respFireOH(i)) { state(i) := Idle }
  for (c <- Seq(gpwc, hpwc, ntlb)) c.foreach { c =>
    c.dropMask((0 until W).map(i => respFireOH(i) && respBus(i)))
    c.confirmMask((0 until W).map(i => respFireOH(i) && !respBus(i)))
  }

  // ---- flush ---------------------------------------------------------------------------------
  io.flush.ready := true.B
  private val fk = io.flush.bits.kind
  private val flushAll = fk === FlushKind.All.U || fk === 3.U
  when(io.flush.fire) {
    for (i <- 0 until W) when(busy(i)) { slot(i).noFill := true.B }
    // a fill decided in the previous cycle lands in this one, and the one that landed in the
    // previous cycle writes its entry in this one (AssocCache writeLate): the flush wins over
    // both (they were asked for by walks in flight at the flush), and the entry the second was
    // writing is invalidated
    for (c <- Seq(gpwc, hpwc, ntlb)) c.foreach(_.cancel())
    gpwc.foreach(c =>
      c.invalidate(c.entries.map { x =>
        flushAll || (x.vmid === io.flush.bits.vmid &&
          (fk === FlushKind.Vmid.U || (fk === FlushKind.VmidAsid.U && x.asid === io.flush.bits.asid)))
      })
    )
    hpwc.foreach(c => c.invalidate(c.entries.map(x => flushAll || (fk === FlushKind.Vmid.U && x.vmid === io.flush.bits.vmid))))
    ntlb.foreach(c => c.invalidate(c.entries.map(x => flushAll || (fk === FlushKind.Vmid.U && x.vmid === io.flush.bits.vmid))))
  }

  // ---- counters ------------------------------------------------------------------------------
  private val success = io.resp.fire && ok
  private val huge = success && rs.gSize =/= 0.U
  PerfCounters.connect(
    io.perf,
    "walks" -> PerfCounter(io.resp.fire),
    "memReads" -> PerfCounter(io.mem_req.fire && !mWrite),
    "memWrites" -> PerfCounter(io.mem_req.fire && mWrite),
    "guestPwcHits" -> PerfCounter(turn && gpwcHit),
    "hostPwcHits" -> PerfCounter(turn && hpwcHit),
    "nestedTlbHits" -> PerfCounter(turn && ntlbHit),
    "faults" -> PerfCounter(io.resp.fire && !ok),
    "busErrors" -> PerfCounter(io.resp.fire && rs.fault === Fault.Bus.U),
    "dirtyEvents" -> PerfCounter(io.dirty.fire),
    "hugeGuest" -> PerfCounter(huge),
    "hugeAligned" -> PerfCounter(huge && rs.hSize >= rs.gSize),
    "splintered" -> PerfCounter(huge && rs.hSize < rs.gSize),
    "flushes" -> PerfCounter(io.flush.fire),
    "badFlushes" -> PerfCounter(io.flush.fire && fk === 3.U),
    "badMemResps" -> PerfCounter(io.mem_resp.valid && !respSlot.reduce(_ || _)),
    "idStalls" -> PerfCounter(io.req.valid && idInFlight)
  )

  // ---- proof views ---------------------------------------------------------------------------
  io.dbg.foreach { d =>
    for (i <- 0 until W) {
      d.slotBusy(i) := busy(i); d.slotId(i) := slot(i).id; d.slotReads(i) := slot(i).memReads
      d.slotWrites(i) := slot(i).memWrites; d.slotNoFill(i) := slot(i).noFill; d.slotMemWait(i) := state(i) === MemWait
    }
    d.lockHeld := VecInit(holds)
    d.slotPteAddr := VecInit(slot.map(_.pteAddr))
    d.slotAdNeedD := VecInit(slot.map(_.adNeedD))
    def view[T <: Data](c: Option[AssocCache[T]], valid: Vec[Bool], vmid: Vec[UInt], vmidOf: T => UInt): Unit = c match {
      case Some(c) => valid := c.valid; vmid := VecInit(c.entries.map(vmidOf))
      case None    => valid := VecInit(Seq.fill(valid.size)(false.B)); vmid := VecInit(Seq.fill(vmid.size)(0.U))
    }
    view[GuestPwcEntry](gpwc, d.gpwcValid, d.gpwcVmid, _.vmid)
    view[HostPwcEntry](hpwc, d.hpwcValid, d.hpwcVmid, _.vmid)
    view[NestedTlbEntry](ntlb, d.ntlbValid, d.ntlbVmid, _.vmid)
    // A hit is shown in its lookup's select cycle (where it is chosen among the entries valid
    // then; the turn uses the registered entry a cycle later): the cache whose hit the turn
    // would take (nested TLB before host PWC) and that entry's vmid.
    val selG = selectTurn && st === Start && gSelC.map(_._1).getOrElse(false.B)
    val selT = selectTurn && st === HostStart && tSelC.map(_._1).getOrElse(false.B)
    val selP = selectTurn && st === HostStart && !selT && pSelC.map(_._1).getOrElse(false.B)
    d.hitCache := Mux(selG, 1.U, Mux(selT, 3.U, Mux(selP, 2.U, 0.U)))
    d.hitVmid := Mux(selG, gSelC.map(_._2.vmid).getOrElse(0.U), Mux(selT, tSelC.map(_._2.vmid).getOrElse(0.U),
      pSelC.map(_._2.vmid).getOrElse(0.U)))
    // fills land one cycle after the turn that decides them (AssocCache late) and write their
    // entry a cycle later (AssocCache writeLate), unless a flush comes in either cycle
    d.fillValid := RegNext(RegNext(turn && filled, false.B) && !io.flush.fire, false.B) && !io.flush.fire
    d.fillSlot := RegNext(RegNext(e))
    d.respHostPerm := rs.hPerm
    for (i <- 0 until W) {
      val x = slot(i)
      d.slotState(i) := state(i).asUInt; d.slotGLevel(i) := x.gLevel; d.slotHLevel(i) := x.hLevel
      d.slotForData(i) := x.forData; d.slotAdHost(i) := x.adHost; d.slotMemKind(i) := x.memKind
      d.slotVmid(i) := x.vmid; d.slotAsid(i) := x.asid; d.slotCmd(i) := x.cmd; d.slotUser(i) := x.user
      d.slotFault(i) := x.fault; d.slotGPerm(i) := x.gPerm; d.slotHPerm(i) := x.hPerm
      d.slotDirtyOnWrite(i) := x.dirtyOnWrite
    }
    gpwc match {
      case Some(c) => d.gpwcAsid := VecInit(c.entries.map(_.asid))
      case None    => d.gpwcAsid := VecInit(Seq.fill(d.gpwcAsid.size)(0.U))
    }
    d.engSlot := e
    d.engValid := curValid
    d.engAfter := engine.lastThermometer.get
    d.lookPhase := lookPhase
    val fillCache = RegNext(RegNext(MuxCase(0.U, Seq((st === GuestEntry) -> 1.U, (st === HostEntry) -> 2.U, (st === HostLeafDone) -> 3.U))))
    d.fillCache := fillCache
    val ways = Seq(1 -> gpwc, 2 -> hpwc, 3 -> ntlb).collect { case (k, Some(c)) => (fillCache === k.U) -> c.fillWay }
    d.fillWay := MuxCase(0.U, ways)
  }
}
