package xlat.common

import chisel3.util.isPow2

/** Parameter checks that name the parameter and its legal range, so that an illegal
  * configuration stops the generator with one readable line (`import ParamCheck._` in a
  * block's parameter case class).
  */
object ParamCheck {
  def range(name: String, v: Int, lo: Int, hi: Int): Unit =
    require(v >= lo && v <= hi, s"$name must be in $lo..$hi, got $v")

  def pow2(name: String, v: Int, lo: Int, hi: Int): Unit =
    require(v >= lo && v <= hi && isPow2(v), s"$name must be a power of 2 in $lo..$hi, got $v")
}
