package xlat.common

import chisel3._

/** A register in two copies, for a register that drives many consumers spread over the die (a
  * key compared with every entry of a fully associative array): each copy drives half of them,
  * so the placer can put each beside its half instead of one net spanning all. Yosys merges
  * flip-flops whose inputs are equal, whatever their attributes (`keep` on the register does
  * not stop it), so the second copy holds the complement of the value and its consumers see it
  * through an inverter, which synthesis folds into their first LUT. Both copies load every
  * cycle, as `RegNext`: they are equal from the first clock on.
  */
object RegCopies {
  /** `d` registered twice: (the plain copy, the copy held as its complement, read back as `d`). */
  def two(d: UInt): (UInt, UInt) = {
    val plain = RegNext(d)
    val inverted = RegNext(~d)
    (plain, ~inverted)
  }

  /** `d` registered in `n` copies (1 to 4) that synthesis keeps apart, each read back as
    * `RegNext(d)`, for a register whose consumers are split into up to four groups (a select
    * driving four slices of a wide multiplexer). Copies 0 and 1 are those of [[two]] (plain and
    * complemented, no reset); copies 2 and 3 are the same two kinds with a synchronous reset
    * (the complement reset to all ones, the plain copy reset to all ones), the only other
    * difference between flip-flops on the same input that Yosys does not merge. So copy 2 reads
    * 0 and copy 3 all ones in the cycle after reset; every copy equals `RegNext(d)` from the
    * second cycle after reset on, and copies 0 and 1 in every cycle. None of them is the plain
    * register with reset value 0 (`RegInit(0.U)`), so a register of the caller written that
    * way on the same `d` stays apart from all of them.
    */
  def many(d: UInt, n: Int, name: String = "copy"): Seq[UInt] = {
    require(n >= 1 && n <= 4, s"RegCopies.many: 1 to 4 copies, got $n")
    val ones = ~0.U(d.getWidth.W)
    def named(r: UInt, k: Int): UInt = r.suggestName(s"${name}_$k")
    val all = Seq(
      () => named(RegNext(d), 0),
      () => ~named(RegNext(~d), 1),
      () => ~named(RegNext(~d, ones), 2),
      () => named(RegNext(d, ones), 3)
    )
    all.take(n).map(_())
  }
}
