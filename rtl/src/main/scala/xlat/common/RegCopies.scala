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
}
