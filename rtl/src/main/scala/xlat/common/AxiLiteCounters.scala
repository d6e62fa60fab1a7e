package xlat.common

import chisel3._
import chisel3.util._

/** A read-only register block of counters behind a [[RegAccess]] port, for the `*_axi` tops of
  * blocks without a CSR port (NestedWalker, PerforatedL2Tlb): counter `i` of `names` (a block's
  * `perf_*` in port order, then the wrapper's own) at byte offset `8 * i`, zero-extended to 64
  * bits. A write, an offset past the last counter or a misaligned one is answered with `error` (SLVERR on AXI);
  * every access is answered one cycle after it is taken (the answer is a register, so no path
  * runs from the AXI-Lite inputs through the counter multiplexer).
  */
class AxiLiteCounters(names: Seq[String], addrBits: Int) extends Module {
  require(names.nonEmpty && names.size * 8 <= (1 << addrBits),
    s"AxiLiteCounters: ${names.size} counters do not fit $addrBits address bits")
  val io = IO(new Bundle {
    val counters = Input(Vec(names.size, UInt(PerfCounter.width.W)))
    val access = Flipped(Decoupled(new RegAccess(addrBits)))
    val answer = Valid(new RegAnswer)
  })
  io.access.ready := true.B
  private val index = io.access.bits.addr >> 3
  // (AxiLiteSlave refuses a misaligned address before it gets here; checked again so that the
  // block stands alone)
  private val bad = io.access.bits.write || index >= names.size.U || io.access.bits.addr(2, 0) =/= 0.U
  io.answer.valid := RegNext(io.access.fire, false.B)
  io.answer.bits.error := RegNext(bad)
  io.answer.bits.rdata := RegNext(Mux(bad, 0.U, io.counters(index(log2Ceil(names.size).max(1) - 1, 0))))
}
