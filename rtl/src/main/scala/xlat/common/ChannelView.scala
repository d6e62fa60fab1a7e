package xlat.common

import chisel3._
import chisel3.util.{DecoupledIO, ValidIO}

/** A proof's view of a channel between two blocks inside a composition: valid, ready and the
  * payload, all outputs of the composition's `dbg_*` ports. A property wrapper that replaces the
  * blocks by abstract models (their outputs free, constrained by their proven guarantees) reads
  * the channels here, in the cycle they are driven, whichever side drives them.
  */
class ChannelView[T <: Data](gen: T) extends Bundle {
  val valid = Bool()
  val ready = Bool()
  val bits = gen
}

object ChannelView {
  /** Drive `view` from channel `c` (`c`'s directions do not matter: only read). */
  def apply[T <: Data](view: ChannelView[T], c: DecoupledIO[T]): Unit = {
    view.valid := c.valid
    view.ready := c.ready
    view.bits := c.bits
  }

  /** A Valid channel (no ready): `ready` reads 1. */
  def apply[T <: Data](view: ChannelView[T], c: ValidIO[T]): Unit = {
    view.valid := c.valid
    view.ready := true.B
    view.bits := c.bits
  }
}
