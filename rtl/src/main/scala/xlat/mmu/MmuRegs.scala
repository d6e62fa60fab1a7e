package xlat.mmu

import chisel3._
import chisel3.util._
import xlat.babelfish.BabelFishPerf
import xlat.common.{PerfCounter, RegDef, RegField, RegMap, StagedRead}
import xlat.pml.{CsrReq, CsrResp, PmlPerf, PmlRegs}
import xlat.walker.WalkerPerf

/** The MMU's own CSR window (**decided** while building, docs/xlat-mmu.md): PmlLogger's registers
  * keep their offsets (0x0000 up to `contexts` x 0x80, at most 0x2000), and the MMU's start at
  * 0x8000 (address bit 15), beyond any PmlLogger configuration:
  *  - 0x8000 CTRL (read/write): bit 0 L1 enable, bit 1 L2 enable (reset 1, 1);
  *  - 0x8100 + 8 i: counter i (read-only, 32 bits zero-extended), in the order of [[names]]:
  *    the MMU's `perf_*`, then L1's, L2's, the walker's and PmlLogger's, prefixed.
  * A write to a counter, or any access to an unmapped MMU offset, answers `error` and is
  * counted in `perf_badCsrs` (PmlLogger counts its own bad accesses).
  * One source for the map: [[all]]; [[json]] writes it into the manifest, [[regMap]] the SystemRDL
  * export (docs/packaging.md).
  */
object MmuRegs {
  val base = 0x8000
  val ctrl = 0x8000
  val counterBase = 0x8100

  /** The counters by block, in register order: the MMU's, L1's, L2's, the walker's, PmlLogger's
    * (the read multiplexer's first stage registers each block's group beside it, [[MmuCsr]]).
    */
  def groups: Seq[Seq[String]] = Seq(MmuPerf.names, BabelFishPerf.names.map("l1_" + _), BabelFishPerf.names.map("l2_" + _),
    WalkerPerf.names.map("walker_" + _), PmlPerf.names.map("pml_" + _))

  def names: Seq[String] = groups.flatten

  /** The MMU's own registers as [[RegDef]]s: CTRL, then the counters. */
  def all: Seq[RegDef] =
    RegDef("CTRL", ctrl, "rw", Seq(RegField("l1Enable", 0, 1, "L1 TLB looked up and filled"),
      RegField("l2Enable", 1, 1, "L2 TLB looked up and filled")), "MMU control (a disabled level still takes fences)", reset = 3) +:
      names.zipWithIndex.map { case (n, i) =>
        RegDef(s"PERF_$n", counterBase + 8 * i, "ro", Seq(RegField("count", 0, 32, s"counter $n (wraps)")), s"performance counter $n")
      }

  /** The whole CSR window: PmlLogger's contexts below 0x8000, the MMU's registers above. */
  def regMap(p: XlatMmuParams, config: String): RegMap =
    RegMap(s"xlat_mmu_$config", s"xlat XlatMmu ($config): PmlLogger's ${p.pml.contexts} contexts, then the MMU's control and counters",
      PmlRegs.all(p.pml), p.pml.contexts, PmlRegs.stride, all)

  def json: ujson.Value = RegMap("", "", Seq(), 0, 0, all).json(all)
}

/** The CSR port's timing (**decided**, session 34; docs/xlat-mmu.md "CSR timing"), in cycles
  * after the cycle r that `csr_req` accepts an access in; the manifest's `derived` exports both
  * (`csrApply`, `csrLatency`), and the testbenches take their expectations from there.
  */
object MmuCsr {
  /** The access applies in r + 1, PmlLogger's rule: a read returns the registers as they are
    * during that cycle (after every update of cycle r), a write takes effect at its end. */
  val applyCycle = 1
  /** `csr_resp` answers in r + 2, one cycle later than PmlLogger alone: the read multiplexer is
    * two registered stages (the routed `mmu_rv` was limited by it as one, 78.67 MHz). */
  val latency = 2
}

/** The CSR port of XlatMmu (PmlLogger below 0x8000, the MMU's window from 0x8000) with the
  * timing of [[MmuCsr$]]: an access accepted in cycle r is decoded from the request into flops
  * (a read select per MMU register, CTRL's write, the bad access), applies in r + 1 (CTRL
  * written; each block's group of counters AND-ORed by the selects into a register beside
  * the group; PmlLogger answers its own access, unchanged, and its answer is registered too)
  * and is answered in r + 2 by the OR of those registers. One access a cycle, each answered
  * once, in order (`csr_req` is always ready).
  *
  * `groups`: the counters' values (32 bits) in [[MmuRegs.groups]] order.
  */
class MmuCsr(groups: Seq[Seq[UInt]]) {
  require(groups.map(_.size) == MmuRegs.groups.map(_.size))
  // the stages below are built for these two values (one decode stage, one AND-OR stage)
  require(MmuCsr.applyCycle == 1 && MmuCsr.latency == 2)
  val l1Enable: Bool = RegInit(true.B)
  val l2Enable: Bool = RegInit(true.B)
  /** A bad MMU access applying this cycle (r + 1, the cycle PmlLogger counts its own in). */
  val bad: Bool = Wire(Bool())
  val resp: Valid[CsrResp] = Wire(Valid(new CsrResp))

  /** `req`: every access accepted this cycle (both windows); `pml`: PmlLogger's answer to those
    * below 0x8000 (r + 1). */
  def apply(req: Valid[CsrReq], pml: Valid[CsrResp]): MmuCsr = {
    val mmu = req.valid && req.bits.addr(15)
    val read = mmu && !req.bits.write
    // the decode, from the request (cycle r): one compare per register, its result a flop
    val hit = MmuRegs.all.map(r => req.bits.addr === r.offset.U)
    val ctrlHit = hit.head
    val readSel = RegNext(VecInit(hit.map(read && _)), VecInit(Seq.fill(hit.size)(false.B))).suggestName("csrReadSel")
    val ctrlWrite = RegNext(mmu && req.bits.write && ctrlHit, false.B)
    // CTRL is the only writable register: its two bits are all a write keeps
    val wdata = RegEnable(req.bits.wdata(1, 0), mmu && req.bits.write && ctrlHit)
    // a counter's address by its range, not the OR of every counter's compare (an OR of ~70
    // was the deepest path into this stage, 11.6 weighted levels in fpga/levels.py)
    val a = req.bits.addr
    val counterEnd = MmuRegs.counterBase + 8 * MmuRegs.names.size
    val isCounter = a >= MmuRegs.counterBase.U && a < counterEnd.U && a(2, 0) === 0.U
    bad := RegNext(mmu && !(ctrlHit || (!req.bits.write && isCounter)), false.B)

    // cycle r + 1: the access applies
    when(ctrlWrite) {
      l1Enable := wdata(0)
      l2Enable := wdata(1)
    }
    val values = Cat(l2Enable, l1Enable).pad(PerfCounter.width) +: groups.flatten
    val sizes = (groups.head.size + 1) +: groups.tail.map(_.size)
    val starts = sizes.scanLeft(0)(_ + _)
    val groupRegs = sizes.indices.map { g =>
      val at = starts(g) until starts(g + 1)
      StagedRead.stage(at.map(readSel(_)), at.map(values(_))).suggestName(s"csrGroup_$g")
    }
    // PmlLogger's answer as it is (its rdata is not 0 outside its answers: its valid gates it
    // in the next stage, where the OR has room for the AND; in this one it would deepen
    // PmlLogger's own read multiplexer)
    val pmlData = RegNext(pml.bits.rdata).suggestName("csrPmlData")
    val pmlValid = RegNext(pml.valid, false.B)
    val pmlError = RegNext(pml.valid && pml.bits.error, false.B)
    val badR = RegNext(bad, false.B)

    // cycle r + 2: answered
    resp.valid := ShiftRegister(req.valid, MmuCsr.latency, false.B, true.B)
    resp.bits.error := badR || pmlError
    resp.bits.rdata := groupRegs.map(_.pad(64)).reduce(_ | _) | StagedRead.andOr(Seq(pmlValid), Seq(pmlData))
    this
  }
}
