package xlat.common

import chisel3._
import chisel3.util._

/** The library-wide page-size encoding (2 bits): 0 = 4 KiB, 1 = 2 MiB, 2 = 1 GiB, 3 reserved.
  *
  * A page of size `s` leaves the low `9 * s` bits of a 4 KiB virtual page number as offset, so
  * "the VPN matches at the entry's granularity" means equality above those bits.
  */
object PageSize {
  val width = 2
  val Size4K = 0
  val Size2M = 1
  val Size1G = 2
  val Reserved = 3

  /** VPN bits below the page number of a page of `size` (0, 9 or 18). */
  def offsetBits(size: Int): Int = 9 * size

  /** Mask that keeps the page-number bits of a `bits`-wide VPN for a page of `size`. */
  def keepMask(size: UInt, bits: Int): UInt = {
    val all = ((BigInt(1) << bits) - 1)
    MuxLookup(size, all.U(bits.W))(
      Seq(
        Size2M.U -> (all ^ ((BigInt(1) << 9) - 1)).U(bits.W),
        Size1G.U -> (all ^ ((BigInt(1) << 18) - 1)).U(bits.W)
      )
    )
  }

  /** True when a page of `size` based at `base` holds the 4 KiB page `vpn`. */
  def covers(base: UInt, size: UInt, vpn: UInt): Bool = {
    val bits = base.getWidth.max(vpn.getWidth)
    ((base ^ vpn) & keepMask(size, bits)) === 0.U
  }

  /** `base` with the offset bits of a page of `size` cleared. */
  def align(base: UInt, size: UInt): UInt = base & keepMask(size, base.getWidth)

  /** True when the offset bits of a page of `size` are not all zero in `frame`. */
  def misaligned(frame: UInt, size: UInt): Bool = (frame & ~keepMask(size, frame.getWidth)) =/= 0.U

  /** The 4 KiB frame of `vpn` inside the page of `size` at frame `base`. */
  def frameOf(base: UInt, size: UInt, vpn: UInt): UInt = {
    val keep = keepMask(size, base.getWidth)
    (base & keep) | (vpn(base.getWidth.min(vpn.getWidth) - 1, 0).pad(base.getWidth) & ~keep)
  }

  def isSuper(size: UInt): Bool = size === Size2M.U || size === Size1G.U

  /** The size a TLB of this encoding holds for the walker's leaf of `size`: a 512 GiB leaf (the
    * walker's 3: an Sv48 / Sv48x4 root leaf) is used as its 1 GiB parts, so it is cached and
    * hit like any 1 GiB page (with [[align]], a part's frame is its 4 KiB frame's 1 GiB base).
    */
  def atMost1G(size: UInt): UInt = Mux(size === Reserved.U, Size1G.U, size)
}
