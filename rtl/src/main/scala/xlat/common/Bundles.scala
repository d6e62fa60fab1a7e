package xlat.common

import chisel3._

/** Access permissions of a translation, shared by every TLB and walker. */
class Perm extends Bundle {
  val r = Bool()
  val w = Bool()
  val x = Bool()
  val u = Bool()
}

/** Access command encoding of the library: 0 read, 1 write, 2 execute/fetch, 3 reserved. */
object AccessCmd {
  val width = 2
  val Read = 0
  val Write = 1
  val Exec = 2
  val Reserved = 3

  /** True when `perm`/`dirty` do not allow `cmd` from a `user` access: a write to a clean page
    * faults so that the core walks and sets D; the reserved command always faults.
    */
  def faults(cmd: UInt, user: Bool, perm: Perm, dirty: Bool): Bool =
    (cmd === Read.U && !perm.r) ||
      (cmd === Write.U && (!perm.w || !dirty)) ||
      (cmd === Exec.U && !perm.x) ||
      cmd === Reserved.U ||
      (user && !perm.u)
}

/** Translation mode of a request, shared by the walker and the MMU above it: 0 bare (no
  * translation: the MMU's business; a walker request in it is bad input), 1 stage 1 only (the
  * guest format over host-physical memory), 2 stage 2 only (the address is guest-physical),
  * 3 both stages (the 2D walk).
  */
object TransMode {
  val width = 2
  val Bare = 0
  val Stage1 = 1
  val Stage2 = 2
  val Both = 3
}
