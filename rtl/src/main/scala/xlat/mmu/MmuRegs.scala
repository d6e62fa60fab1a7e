package xlat.mmu

import chisel3._
import chisel3.util._
import xlat.babelfish.BabelFishPerf
import xlat.common.{RegDef, RegField, RegMap}
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

  def names: Seq[String] = MmuPerf.names ++ BabelFishPerf.names.map("l1_" + _) ++ BabelFishPerf.names.map("l2_" + _) ++
    WalkerPerf.names.map("walker_" + _) ++ PmlPerf.names.map("pml_" + _)

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

/** The MMU's CSR stage, with PmlLogger's timing (docs/pml-logger.md "Pipeline timing"): an
  * access accepted in cycle r applies in r+1 (a read returns the registers at the start of that
  * cycle, a write takes effect at its end) and answers in r+1.
  */
class MmuCsr(counters: Seq[UInt]) {
  require(counters.size == MmuRegs.names.size)
  val l1Enable: Bool = RegInit(true.B)
  val l2Enable: Bool = RegInit(true.B)
  /** A bad access applied this cycle. */
  val bad: Bool = Wire(Bool())
  val resp: Valid[CsrResp] = Wire(Valid(new CsrResp))

  /** `req` is an accepted access to the MMU's window (address bit 15 set). */
  def apply(req: Valid[CsrReq]): MmuCsr = {
    val r = RegNext(req.valid, false.B)
    val addr = RegEnable(req.bits.addr, req.valid)
    val write = RegEnable(req.bits.write, req.valid)
    // CTRL is the only writable register: its two bits are all a write keeps
    val wdata = RegEnable(req.bits.wdata(1, 0), req.valid)
    val isCtrl = addr === MmuRegs.ctrl.U
    val idx = addr(15, 3) - (MmuRegs.counterBase >> 3).U
    val isCounter = addr >= MmuRegs.counterBase.U && addr < (MmuRegs.counterBase + 8 * counters.size).U && addr(2, 0) === 0.U
    bad := r && !(isCtrl || (isCounter && !write))
    when(r && isCtrl && write) {
      l1Enable := wdata(0)
      l2Enable := wdata(1)
    }
    resp.valid := r
    resp.bits.error := bad
    resp.bits.rdata := Mux(bad || write, 0.U,
      Mux(isCtrl, Cat(l2Enable, l1Enable), VecInit(counters.map(_.pad(64))).apply(idx(log2Ceil(counters.size) - 1, 0))))
    this
  }
}
