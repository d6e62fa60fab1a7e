package xlat.common

import chisel3._
import chisel3.util._

/** Fair choice of one requester a cycle: the first requester after the last one granted.
  * Walk slots compete for the walker's step engine, memory port, A/D lock and output channels;
  * round robin keeps one busy slot from starving the others.
  */
class RoundRobin(n: Int) {
  private val bits = log2Ceil(n).max(1)
  private val last = RegInit((n - 1).U(bits.W))
  val valid: Bool = Wire(Bool())
  val index: UInt = Wire(UInt(bits.W))

  /** Connect the requests; call `granted()` in the cycles the choice is used. */
  def apply(req: Seq[Bool]): RoundRobin = {
    require(req.size == n)
    // Order: last+1 .. n-1, then 0 .. last.
    val after = VecInit((0 until n).map(i => req(i) && i.U > last))
    val any = VecInit(req)
    valid := any.asUInt.orR
    index := Mux(after.asUInt.orR, PriorityEncoder(after), PriorityEncoder(any))
    this
  }

  def granted(): Unit = last := index
}
