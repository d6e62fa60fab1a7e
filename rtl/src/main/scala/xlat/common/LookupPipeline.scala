package xlat.common

import chisel3._
import chisel3.util._

/** Where the pipelined lookup pattern of an associative structure puts its registers.
  *
  * ==Stages==
  * Every operation (a lookup, a fill, an invalidation) passes the same three stages in order of
  * acceptance:
  *  - '''read''' (the acceptance cycle): the set is read from storage, with its valid bits;
  *  - '''match''': every entry of the set, and every entry of a fully associative array, is
  *    compared with the operation: per-class hit vectors for a lookup, the same-key vector for a
  *    fill, the removal mask for an invalidation;
  *  - '''select''': priority over the hit vector and a one-hot select give the response; the
  *    replacement state and the counters are updated; a fill chooses its way and writes it; an
  *    invalidation clears what it removes. The response is registered after this stage.
  *
  * `readReg` puts a register between read and match (always present with SRAM storage: the
  * array's own read register); `hitReg` registers the hit vectors between match and select, so
  * that priority, selection, replacement and counters never sit in the match cone. The response
  * of an operation accepted in cycle t is valid in cycle t + `latency`.
  *
  * ==Hazards==
  * A write (fill or invalidation) lands at the end of its select stage. An operation accepted
  * after a write must read storage after that, so after issuing a write the structure accepts
  * nothing for `writeShadow` = `latency - 1` cycles ([[WriteShadow]]). Lookups never wait for
  * each other: one lookup a cycle, back to back. Replacement state and counters are read and
  * written only in select, in acceptance order, so they need no bypass.
  */
case class LookupTiming(readReg: Boolean, hitReg: Boolean) {
  val latency: Int = 1 + (if (readReg) 1 else 0) + (if (hitReg) 1 else 0)
  /** Cycles after a write is issued during which no operation is accepted. */
  val writeShadow: Int = latency - 1
}

object LookupTiming {
  /** Legal latencies: flops 1 (all in one cycle), 2 (registered hit vector), 3 (registered read
    * and hit vector); SRAM 2 (read register only) and 3 (read register and hit vector).
    */
  def legal(sram: Boolean): Seq[Int] = if (sram) Seq(2, 3) else Seq(1, 2, 3)

  def apply(latency: Int, sram: Boolean): LookupTiming = {
    val kind = if (sram) "sram" else "flops"
    require(legal(sram).contains(latency),
      s"latency must be one of ${legal(sram).mkString(", ")} with storage = $kind, got $latency")
    if (sram) LookupTiming(readReg = true, hitReg = latency == 3)
    else LookupTiming(readReg = latency == 3, hitReg = latency >= 2)
  }
}

/** A pipeline stage boundary that is a register or a wire, as a [[LookupTiming]] says. */
object Stage {
  /** The operation one stage later: registered (valid reset to 0, payload loaded when valid). */
  def apply[T <: Data](in: Valid[T], registered: Boolean): Valid[T] =
    if (!registered) in
    else {
      val r = Wire(Valid(chiselTypeOf(in.bits)))
      r.valid := RegNext(in.valid, false.B)
      r.bits := RegEnable(in.bits, in.valid)
      r
    }

  /** Data computed for the operation in `in`'s stage, carried to the next stage with it. */
  def carry[T <: Data](data: T, in: Valid[_], registered: Boolean): T =
    if (registered) RegEnable(data, in.valid) else data
}

/** The write shadow: after a write is issued, `cycles` cycles in which nothing is accepted, so
  * that every later operation reads storage after the write has landed.
  */
class WriteShadow(cycles: Int) {
  require(cycles >= 0, s"WriteShadow: cycles must be >= 0, got $cycles")
  private val left = if (cycles == 0) None else Some(RegInit(0.U(log2Ceil(cycles + 1).W)))

  /** True while an earlier write has not landed. */
  val busy: Bool = left.map(_ =/= 0.U).getOrElse(false.B)

  /** Call once: `write` is high in every cycle a write is issued (accepted, or a sweep step). */
  def issue(write: Bool): Unit = left.foreach { l =>
    when(write) { l := cycles.U }.elsewhen(l =/= 0.U) { l := l - 1.U }
  }
}
