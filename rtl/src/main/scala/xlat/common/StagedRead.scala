package xlat.common

import chisel3._

/** A register read multiplexer built as AND-OR stages with a register after each, for a CSR
  * port whose registers sit all over the die (a composed block's counters, one set in every
  * block): a one-case-per-register multiplexer from one address register is a net to every
  * block plus a deep tree, too long for one cycle once routed (XlatMmu, docs/xlat-mmu.md
  * "CSR timing"). The caller decodes the address into a one-hot select per register (a flop
  * each, from the request), [[stage]] registers one group's AND-OR next to the group, and the
  * next cycle ORs the group registers (at most one is non-zero). Each stage is AND-OR only: no
  * comparator and no binary index follows a register.
  */
object StagedRead {
  /** The value whose select is set, 0 when none is (the selects are one-hot or all clear). Not
    * `Mux1H`, which returns a single input unselected: here a clear select always reads 0, so
    * the OR of several groups is the one selected. */
  def andOr(sel: Seq[Bool], values: Seq[UInt]): UInt = {
    require(sel.size == values.size && sel.nonEmpty, "StagedRead.andOr: one select per value")
    sel.zip(values).map { case (s, v) => Mux(s, v, 0.U) }.reduce(_ | _)
  }

  /** One group registered: its AND-OR, in a register reset to 0 (so a group nothing selected
    * reads 0 in the cycle after reset too). */
  def stage(sel: Seq[Bool], values: Seq[UInt]): UInt = {
    val v = andOr(sel, values)
    RegNext(v, 0.U(v.getWidth.W))
  }
}
