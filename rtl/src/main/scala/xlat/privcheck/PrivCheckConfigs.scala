package xlat.privcheck

import xlat.common.{BlockConfigs, Design}

/** The check has no parameters: one wrapper holds every architecture's functions. */
case class PrivCheckParams()

/** [[PrivCheckWrapper]] for the generator: a block without named configurations. The
  * testbench generates it on demand as the test-only `privcheck` (tb/privcheck), so `make`
  * does not ship it; the check itself reaches the product inside the walker and XlatMmu.
  */
object PrivCheckConfigs extends BlockConfigs[PrivCheckParams] {
  val block = "privcheck"
  def defaults: PrivCheckParams = PrivCheckParams()
  def design(config: String, p: PrivCheckParams): Design =
    Design(config, block, "PrivCheckWrapper", p, Seq())(() => new PrivCheckWrapper)
  def named: Seq[(String, () => PrivCheckParams)] = Seq()
}
