package xlat.common

import chisel3.RawModule

/** One configuration of one block: what the generator emits into `<out>/<config>/`.
  *
  * `params` is the block's parameter case class (every field goes into the manifest and, when it
  * is an Int or a Boolean, into params.svh); `derived` are values a user does not set but
  * testbenches and scripts need.
  */
case class Design(config: String, block: String, module: String, params: Product, derived: Seq[(String, Any)])(
    val elaborate: () => RawModule,
    /** More manifest entries (e.g. a register map). */
    val extraManifest: Seq[(String, ujson.Value)] = Seq(),
    /** Files written beside the Verilog: (path relative to the configuration's folder, text). */
    val extraFiles: Seq[(String, String)] = Seq()
)

/** A block as the generator sees it; each block's package has one (`xlat.babelfish.BabelFishConfigs`, ...)
  * and `xlat.Generate` lists them.
  *
  * A block gives its parameter defaults, how one parameter set becomes a [[Design]], and its
  * named configurations; parameters given as text (`key=value` or a JSON file) go through
  * [[ParamMap.build]], so the case class's `require`s check them like any other construction.
  */
trait BlockConfigs[P <: Product] {

  /** The block's name on the command line (`--block`) and in the manifest. */
  def block: String

  /** The parameters a custom configuration starts from. */
  def defaults: P

  /** The design of configuration `config` with parameters `p`. */
  def design(config: String, p: P): Design

  /** Named configurations in the order `--list` prints them. Each is a function so that a bad
    * entry fails when it is generated, not when the block is loaded (which would stop `--list`).
    */
  def named: Seq[(String, () => P)]

  /** A custom configuration from parameters given as text; the rest keep their defaults. */
  final def custom(config: String, values: Map[String, String]): Design =
    design(config, ParamMap.build(block, defaults, values))

  /** Named configuration `config` built under another configuration name `as` (its files are
    * named after `as`): what an `*_axi` top of a named configuration wraps.
    */
  final def namedAs(config: String, as: String): Option[Design] = named.find(_._1 == config).map(n => design(as, n._2()))

  /** The named configurations as designs, built on demand. */
  final def namedDesigns: Seq[(String, () => Design)] = named.map { case (n, p) => n -> (() => design(n, p())) }
}
