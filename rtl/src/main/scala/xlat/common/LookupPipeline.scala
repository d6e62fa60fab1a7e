package xlat.common

import chisel3._
import chisel3.util._

/** Where the pipelined lookup pattern of an associative structure puts its registers.
  *
  * ==Stages==
  * Every operation (a lookup, a fill, an invalidation) passes the same stages in order of
  * acceptance:
  *  - '''read''' (the acceptance cycle): the set is read from storage, with its valid bits;
  *  - '''match''': every entry of the set, and every entry of a fully associative array, is
  *    compared with the operation: per-class hit vectors for a lookup, the same-key vector for a
  *    fill, the removal mask for an invalidation;
  *  - '''pick''': priority over the hit vectors gives the winning entry as a one-hot vector;
  *  - '''respond''': the winner's data makes the response, which is registered; the replacement
  *    state and the counters are updated; a fill chooses its way; an invalidation clears what it
  *    removes;
  *  - '''commit''' (fills, with `selReg`): the chosen way is written one cycle after it was
  *    chosen, so that neither the victim choice nor the write enables of every entry sit behind
  *    the replacement-state read. Without `selReg` a fill writes in respond.
  *
  * `readReg` puts a register between read and match (always present with SRAM storage: the
  * array's own read register); `hitReg` registers the hit vectors between match and pick;
  * `selReg` registers the one-hot winner between pick and respond (without it pick and respond
  * share a cycle). Two more, for large SRAM arrays (block RAM), where the read port's address
  * setup and clock-to-out are each most of a cycle: `opReg` registers the accepted operation
  * before the read (the read stage is then the cycle after acceptance, and the read address
  * comes from a register), `rowReg` registers the row a second time after the SRAM's read
  * register (the comparators start from flops, not from the block RAM's outputs). The response
  * of an operation accepted in cycle t is valid in cycle t + `latency`.
  *
  * ==Hazards==
  * A write lands at the end of its last stage. An operation accepted after a write must read
  * storage after that, so after issuing a write the structure accepts nothing for
  * `writeShadow` cycles ([[WriteShadow]]): `latency - 1`, plus the commit cycle with `selReg`,
  * minus one with `opReg` (a later operation too reads one cycle after its acceptance).
  * Lookups never wait for each other: one lookup a cycle, back to back. Replacement state is
  * read and written only in respond (and in a fill's commit, when nothing else is in flight),
  * in acceptance order, so it needs no bypass.
  */
case class LookupTiming(
    readReg: Boolean,
    hitReg: Boolean,
    selReg: Boolean = false,
    opReg: Boolean = false,
    rowReg: Boolean = false
) {
  require(!rowReg || readReg, "LookupTiming: rowReg is a second read register, it needs readReg")
  private def n(b: Boolean) = if (b) 1 else 0
  val latency: Int = 1 + n(opReg) + n(readReg) + n(rowReg) + n(hitReg) + n(selReg)
  /** Cycles after a write is issued during which no operation is accepted. */
  val writeShadow: Int = latency - 1 + n(selReg) - n(opReg)
}

object LookupTiming {
  /** Legal latencies: flops 1 (all in one cycle), 2 (registered hit vector), 3 (registered read
    * and hit vector), 4 (and a registered winner); SRAM 2 (read register only), 3 (read register
    * and hit vector), 4 (and a registered winner). With `sramDeep` (a generator that supports
    * `opReg` and `rowReg`) also SRAM 5 (latency 4 plus the second read register) and 6 (and the
    * operation registered before the read).
    */
  def legal(sram: Boolean, sramDeep: Boolean = false): Seq[Int] =
    if (sram) (if (sramDeep) Seq(2, 3, 4, 5, 6) else Seq(2, 3, 4)) else Seq(1, 2, 3, 4)

  def apply(latency: Int, sram: Boolean): LookupTiming = apply(latency, sram, sramDeep = false)

  def apply(latency: Int, sram: Boolean, sramDeep: Boolean): LookupTiming = {
    val kind = if (sram) "sram" else "flops"
    val ok = legal(sram, sramDeep)
    require(ok.contains(latency),
      s"latency must be one of ${ok.mkString(", ")} with storage = $kind, got $latency")
    if (sram) LookupTiming(readReg = true, hitReg = latency >= 3, selReg = latency >= 4,
      opReg = latency >= 6, rowReg = latency >= 5)
    else LookupTiming(readReg = latency >= 3, hitReg = latency >= 2, selReg = latency == 4)
  }
}

/** A pipeline stage boundary that is a register or a wire, as a [[LookupTiming]] says.
  *
  * Payload registers load every cycle (no enable): they are read only while their valid bit is
  * set, and an enable would put the acceptance logic's fan-out in front of every one of them.
  */
object Stage {
  /** The operation one stage later: registered (valid reset to 0, payload loaded every cycle). */
  def apply[T <: Data](in: Valid[T], registered: Boolean): Valid[T] =
    if (!registered) in
    else {
      val r = Wire(Valid(chiselTypeOf(in.bits)))
      r.valid := RegNext(in.valid, false.B)
      r.bits := RegNext(in.bits)
      r
    }

  /** Data computed for the operation of one stage, carried to the next stage with it. */
  def carry[T <: Data](data: T, registered: Boolean): T = if (registered) RegNext(data) else data
}

/** The write shadow: after a write is issued, `cycles` cycles in which nothing is accepted, so
  * that every later operation reads storage after the write has landed.
  */
class WriteShadow(cycles: Int) {
  require(cycles >= 0, s"WriteShadow: cycles must be >= 0, got $cycles")
  private val left = if (cycles == 0) None else Some(RegInit(0.U(log2Ceil(cycles + 1).W)))

  /** True while an earlier write has not landed. */
  val busy: Bool = left.map(_ =/= 0.U).getOrElse(false.B)

  /** What [[busy]] will be in the next cycle when [[issue]] gets `write` now: for an owner that
    * keeps `busy` in a register of its own (it then needs no compare of the counter).
    */
  def busyAfter(write: Bool): Bool = left.map(l => write || l > 1.U).getOrElse(false.B)

  /** At least `n` cycles of the shadow are left (for proofs: a write issued k cycles ago keeps
    * `cycles - k + 1` left). Adds no hardware unless called.
    */
  def atLeast(n: Int): Bool = left.map(_ >= n.U).getOrElse((n <= 0).B)

  /** Call once: `write` is high in every cycle a write is issued (accepted, or a sweep step). */
  def issue(write: Bool): Unit = left.foreach { l =>
    when(write) { l := cycles.U }.elsewhen(l =/= 0.U) { l := l - 1.U }
  }
}
