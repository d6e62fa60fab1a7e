package xlat.common

import chisel3._

/** The library's memory port (spec README): one 8-byte word per request, responses matched by
  * `id` and free to return out of order. Walkers, bitmap fetchers and loggers all use it; an
  * AXI4 adapter in fpga/ turns it into an AXI4 master.
  */
class MemReq(val idBits: Int, val addrBits: Int) extends Bundle {
  val id = UInt(idBits.W)
  /** Byte address, 8-byte aligned. */
  val addr = UInt(addrBits.W)
  val write = Bool()
  val wdata = UInt(64.W)
  /** Bytes of `wdata` a write changes; 0 on reads. */
  val wmask = UInt(8.W)
}

class MemResp(val idBits: Int) extends Bundle {
  val id = UInt(idBits.W)
  val rdata = UInt(64.W)
  /** Bus error: `rdata` is meaningless and a write may not have happened. */
  val error = Bool()
}
