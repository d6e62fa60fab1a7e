package xlat.common

import chisel3._
import chisel3.util._

/** Accepted invalidations that are not done yet, oldest first: the `invalDone` order of DevTlb
  * and PerforatedL2Tlb (docs/devtlb.md "Invalidation", docs/perforated-l2tlb.md "invalDone").
  *
  * Each one waits for the slots (ATS requests, walks) it found busy when it was pushed (a bit
  * per slot, cleared when the slot is freed) and for the responses queued before it (`owed`,
  * lowered by every dequeue of the response queue). The oldest is done, and `invalDone` pulses,
  * in the first cycle both are zero; the block pushes it from its respond stage, so its removal
  * has landed by then.
  *
  * Where a freed slot answers through the same queue (PerforatedL2Tlb: a walk's response joins
  * the tail), the invalidation must also wait for that response: `owedAfterFree` (the queue's
  * count after this cycle) replaces `owed` when a slot it waits for is freed. Where freed slots
  * answer elsewhere (DevTlb), it is `None`.
  *
  * @param n        invalidations pending at once (`invalPending`)
  * @param slots    slots an invalidation can wait for
  * @param owedBits width of the owed-response count (log2(queue depth + 1))
  */
class InvalWait(n: Int, slots: Int, owedBits: Int) {
  require(n >= 1, s"InvalWait: n must be at least 1, got $n")
  private val ptrBits = log2Ceil(n).max(1)
  private val valid = RegInit(VecInit(Seq.fill(n)(false.B)))
  private val mask = Reg(Vec(n, UInt(slots.W)))
  private val owed = Reg(Vec(n, UInt(owedBits.W)))
  private val head = RegInit(0.U(ptrBits.W))
  private val tail = RegInit(0.U(ptrBits.W))
  val count: UInt = RegInit(0.U(log2Ceil(n + 1).W))
  private def next(x: UInt): UInt = if (isPow2(n)) (x + 1.U)(ptrBits - 1, 0) else Mux(x === (n - 1).U, 0.U, x + 1.U)

  /** The oldest pending invalidation is done in this cycle. */
  val done: Bool = valid(head) && mask(head) === 0.U && owed(head) === 0.U

  /** Call once a cycle: `push` a new one with the slots it waits for and its owed responses;
    * `freeing`: slots freed this cycle; `popped`: a response left the queue this cycle.
    */
  def update(push: Bool, pushMask: UInt, pushOwed: UInt, freeing: UInt, popped: Bool,
             owedAfterFree: Option[UInt] = None): Unit = {
    for (i <- 0 until n) {
      mask(i) := mask(i) & ~freeing
      when(popped && owed(i) =/= 0.U) { owed(i) := owed(i) - 1.U }
      // last connect wins: a freed slot's response is queued behind the pops of this cycle
      owedAfterFree.foreach(c => when((mask(i) & freeing).orR) { owed(i) := c })
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
