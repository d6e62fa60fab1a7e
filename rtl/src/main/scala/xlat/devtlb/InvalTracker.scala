package xlat.devtlb

import chisel3._
import chisel3.util._

/** Accepted invalidations that are not done yet, oldest first (docs/devtlb.md, "Invalidation").
  *
  * Each one waits for the slots it marked stale (a bit per slot, cleared when the slot is freed)
  * and for the hit responses that were queued before it (a count, lowered by every dequeue of
  * the hit queue). The oldest one is done, and `invalDone` pulses, in the first cycle both are
  * zero; its removal has landed by then, since it is pushed from its respond stage.
  */
class InvalTracker(p: DevTlbParams, owedBits: Int) {
  private val n = p.invalPending
  private val ptrBits = log2Ceil(n).max(1)
  private val valid = RegInit(VecInit(Seq.fill(n)(false.B)))
  private val mask = Reg(Vec(n, UInt(p.slots.W)))
  private val owed = Reg(Vec(n, UInt(owedBits.W)))
  private val head = RegInit(0.U(ptrBits.W))
  private val tail = RegInit(0.U(ptrBits.W))
  val count: UInt = RegInit(0.U(log2Ceil(n + 1).W))
  private def next(x: UInt): UInt = if (isPow2(n)) (x + 1.U)(ptrBits - 1, 0) else Mux(x === (n - 1).U, 0.U, x + 1.U)

  /** The oldest pending invalidation is done in this cycle. */
  val done: Bool = valid(head) && mask(head) === 0.U && owed(head) === 0.U

  /** Call once a cycle: `push` a new one with its stale slots and owed responses; `freeing`:
    * slots freed this cycle; `popped`: a hit response left the queue this cycle.
    */
  def update(push: Bool, pushMask: UInt, pushOwed: UInt, freeing: UInt, popped: Bool): Unit = {
    for (i <- 0 until n) {
      mask(i) := mask(i) & ~freeing
      when(popped && owed(i) =/= 0.U) { owed(i) := owed(i) - 1.U }
    }
    when(done) {
      valid(head) := false.B
      head := next(head)
    }
    when(push) {
      valid(tail) := true.B
      mask(tail) := pushMask & ~freeing
      owed(tail) := pushOwed
      tail := next(tail)
    }
    count := count + push.asUInt - done.asUInt
  }
}
