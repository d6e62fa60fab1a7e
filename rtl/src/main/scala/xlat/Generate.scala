package xlat

import java.nio.file.{Files, Path, Paths}
import scopt.{DefaultOParserSetup, OEffect, OParser}
import xlat.common.{AxiTop, BlockConfigs, Design}
import xlat.babelfish.BabelFishConfigs
import xlat.pml.PmlConfigs
import xlat.walker.WalkerConfigs
import xlat.devtlb.DevTlbConfigs
import xlat.perforated.PerforatedConfigs
import xlat.privcheck.PrivCheckConfigs
import xlat.mmu.XlatMmuConfigs

/** Command-line generator: a thin layer (scopt) over the blocks' [[BlockConfigs]], which hold
  * the named configurations; [[Emit]] writes each design.
  *
  * {{{
  * xlat.Generate [--out DIR] [--prefix P] [--all | --config NAME ...]   (no form: --all)
  * xlat.Generate [--out DIR] [--prefix P] --block BLOCK [--name NAME] [key=value ...]
  * xlat.Generate [--out DIR] [--prefix P] --json FILE   (one object: "block", "name" and parameters)
  * xlat.Generate --list | --help
  * }}}
  * `--axi` emits each requested configuration as its AXI top instead ([[xlat.common.AxiTop]],
  * docs/packaging.md "AXI"), named `<config>_axi`; four of them are named configurations.
  * `--prefix P` names every emitted module `P_<name>`, so that two configurations of one block
  * can be compiled into one design.
  *
  * Errors: every bad input (unknown option, configuration, block or parameter, an illegal
  * parameter value, a file that is not one JSON object) stops with exit code 2 and one line
  * `xlat.Generate: error: ...` on stderr that names it; `XLAT_DEBUG=1` adds the stack trace.
  * Parameters are checked for every requested design before any is emitted.
  */
object Generate {

  /** The blocks the generator knows, in the order `--list` and `--all` go through them
    * (`privcheck` is test-only: no named configuration).
    */
  val blocks: Seq[BlockConfigs[_ <: Product]] =
    Seq(BabelFishConfigs, WalkerConfigs, PmlConfigs, DevTlbConfigs, PerforatedConfigs, XlatMmuConfigs, PrivCheckConfigs)

  /** Blocks with a memory or a CSR port: the ones an AXI top wraps (**decided** by the lead,
    * docs/packaging.md "AXI"; BabelFishTlb and DevTlb have neither).
    */
  val axiBlocks: Set[String] = Set("walker", "perforated", "pml", "mmu")

  /** Named configurations whose AXI top is a named configuration too (`<config>_axi`). */
  val axiNamed: Seq[String] = Seq("walker_rv39", "perforated_default", "pml_default", "mmu_rv")

  /** The AXI top of named configuration `config`, as configuration `<config>_axi`. */
  private def axiOf(config: String): Design = {
    val d = blocks.flatMap(_.namedAs(config, s"${config}_axi")).head
    if (!axiBlocks(d.block)) fail(s"config '$config': block '${d.block}' has no memory or CSR port for an AXI top (--axi: ${axiBlocks.toSeq.sorted.mkString(", ")})")
    AxiTop.wrap(d)
  }

  /** Every block's named configurations, then the named AXI tops. */
  def named: Seq[(String, () => Design)] =
    blocks.flatMap(_.namedDesigns) ++ axiNamed.map(c => s"${c}_axi" -> (() => axiOf(c)))

  private def knownBlocks = blocks.map(_.block).mkString(", ")

  case class Options(
      out: Path = Paths.get("build/rtl"),
      list: Boolean = false,
      all: Boolean = false,
      configs: Seq[String] = Seq(),
      block: Option[String] = None,
      name: Option[String] = None,
      json: Option[Path] = None,
      prefix: Option[String] = None,
      axi: Boolean = false,
      values: Seq[(String, String)] = Seq()
  )

  private val builder = OParser.builder[Options]
  private val parser = {
    import builder._
    OParser.sequence(
      programName("xlat.Generate"),
      head("Emits the Verilog, manifest.json and params.svh of block configurations into <out>/<config>/."),
      opt[Path]("out").valueName("DIR").action((d, o) => o.copy(out = d)).text("output folder (default build/rtl)"),
      opt[Unit]("list").action((_, o) => o.copy(list = true)).text("print the named configurations and stop"),
      opt[Unit]("all").action((_, o) => o.copy(all = true)).text("every named configuration (the default)"),
      opt[String]("config").unbounded().valueName("NAME")
        .validate(c => if (named.exists(_._1 == c)) success else failure(s"unknown configuration '$c' (see --list)"))
        .action((c, o) => o.copy(configs = o.configs :+ c)).text("one named configuration (repeatable)"),
      opt[String]("block").valueName("BLOCK")
        .validate(b => if (blocks.exists(_.block == b)) success else failure(s"unknown block '$b' (known: $knownBlocks)"))
        .action((b, o) => o.copy(block = Some(b))).text(s"a custom configuration of BLOCK ($knownBlocks)"),
      opt[String]("name").valueName("NAME").action((n, o) => o.copy(name = Some(n)))
        .text("its configuration name (default <BLOCK>_custom)"),
      arg[(String, String)]("key=value ...").unbounded().optional().action((kv, o) => o.copy(values = o.values :+ kv))
        .text("its parameters: fields of the block's parameter case class; the rest keep their defaults"),
      opt[Path]("json").valueName("FILE").action((f, o) => o.copy(json = Some(f)))
        .text("a custom configuration from one JSON object: \"block\", \"name\" and parameters"),
      opt[String]("prefix").valueName("P")
        .validate(x => if (x.matches("[A-Za-z][A-Za-z0-9]*")) success else failure(s"--prefix must be letters and digits, got '$x'"))
        .action((x, o) => o.copy(prefix = Some(x))).text("name every emitted module P_<name>"),
      opt[Unit]("axi").action((_, o) => o.copy(axi = true))
        .text(s"emit each configuration's AXI top, named <config>_axi (blocks ${axiBlocks.toSeq.sorted.mkString(", ")})"),
      help("help").text("print this usage and stop"),
      checkConfig { o =>
        if (Seq(o.all || o.configs.nonEmpty, o.block.isDefined, o.json.isDefined).count(identity) > 1)
          failure("give one of --all / --config, --block, --json")
        else if (o.block.isEmpty && (o.name.isDefined || o.values.nonEmpty))
          failure("--name and key=value parameters need --block")
        else success
      }
    )
  }

  private val setup = new DefaultOParserSetup {
    override def showUsageOnError: Option[Boolean] = Some(false)
  }

  /** The end of one run with exit code `code` (2: bad input), thrown so that [[run]] returns it
    * and [[GenerateBatch]] can run many command lines in one JVM.
    */
  final class Stop(val code: Int) extends scala.util.control.ControlThrowable

  private def fail(msg: String): Nothing = {
    System.err.println(s"xlat.Generate: error: $msg")
    throw new Stop(2)
  }

  /** The message of the first `require` (or argument error) behind a failure. */
  private def reason(t: Throwable): Option[String] = t match {
    case null                        => None
    case e: IllegalArgumentException => Some(e.getMessage.stripPrefix("requirement failed: "))
    case e                           => reason(e.getCause)
  }

  /** Runs `body`; any failure becomes one line naming `what` and its reason. */
  private def attempt[T](what: String)(body: => T): T =
    try body
    catch {
      case s: Stop => throw s
      case t: Throwable =>
        if (sys.env.contains("XLAT_DEBUG")) t.printStackTrace()
        fail(s"$what: ${reason(t).getOrElse(t.toString)}")
    }

  /** A custom configuration from a JSON file: one object with "block", "name" and parameters.
    * Values are strings, numbers or booleans, read as the same text a `key=value` gives, so the
    * block checks them in one place ([[xlat.common.ParamMap]]).
    */
  private def fromJson(f: Path, axi: Boolean): Design = {
    val text =
      try Files.readString(f)
      catch { case _: java.io.IOException => fail(s"cannot read parameter file '$f'") }
    val fields =
      try ujson.read(text).objOpt.getOrElse(fail(s"$f: parameter file must hold one JSON object"))
      catch { case e: Exception with ujson.ParsingFailedException => fail(s"$f: not JSON: ${e.getMessage}") }
    val values = fields.toMap.map {
      case (k, ujson.Str(s))                => k -> s
      case (k, ujson.Bool(b))               => k -> b.toString
      case (k, ujson.Num(n)) if n.isWhole   => k -> BigDecimal(n).toBigInt.toString
      case (k, ujson.Num(n))                => k -> n.toString
      case (k, _)                           => fail(s"$f: \"$k\" must be a string, number or boolean")
    }
    val b = values.getOrElse("block", fail(s"$f: missing \"block\""))
    val n = values.getOrElse("name", fail(s"$f: missing \"name\""))
    val block = blocks.find(_.block == b).getOrElse(fail(s"$f: unknown block '$b' (known: $knownBlocks)"))
    customOf(block, n, values - "block" - "name", axi)
  }

  /** A custom configuration `n` of `block`, or with `axi` its AXI top `<n>_axi`. */
  private def customOf(block: BlockConfigs[_ <: Product], n: String, values: Map[String, String], axi: Boolean): Design =
    if (!axi) attempt(s"config '$n'")(block.custom(n, values))
    else if (!axiBlocks(block.block))
      fail(s"config '$n': block '${block.block}' has no memory or CSR port for an AXI top (--axi: ${axiBlocks.toSeq.sorted.mkString(", ")})")
    else attempt(s"config '${n}_axi'")(AxiTop.wrap(block.custom(s"${n}_axi", values)))

  def main(args: Array[String]): Unit = {
    val code = run(args.toSeq)
    if (code != 0) sys.exit(code)
  }

  /** One command line, as [[main]] runs it; returns the exit code instead of exiting. */
  def run(args: Seq[String]): Int =
    try { generate(args); 0 }
    catch { case s: Stop => s.code }

  private def generate(args: Seq[String]): Unit = {
    val (parsed, effects) = OParser.runParser(parser, args, Options(), setup)
    effects.foreach {
      case OEffect.DisplayToOut(msg)  => println(msg)
      case OEffect.DisplayToErr(msg)  => System.err.println(msg)
      case OEffect.ReportError(msg)   => fail(msg)
      case OEffect.ReportWarning(msg) => System.err.println(s"xlat.Generate: warning: $msg")
      case OEffect.Terminate(exit)    => throw new Stop(if (exit.isRight) 0 else 2)
    }
    val o = parsed.getOrElse(fail("cannot parse the command line (see --help)"))
    if (o.list) { named.foreach(n => println(n._1)); return }

    val designs: Seq[Design] = (o.json, o.block) match {
      case (Some(f), _) => Seq(fromJson(f, o.axi))
      case (None, Some(b)) =>
        val n = o.name.getOrElse(s"${b}_custom")
        Seq(customOf(blocks.find(_.block == b).get, n, o.values.toMap, o.axi))
      case (None, None) =>
        val wanted = if (o.configs.isEmpty) named.map(_._1) else o.configs
        if (o.axi && o.configs.isEmpty) fail("--axi needs --config, --block or --json (not every block has an AXI top)")
        if (o.axi) wanted.map { c =>
          if (!blocks.exists(_.named.exists(_._1 == c))) fail(s"--axi: '$c' is not a plain named configuration")
          attempt(s"config '${c}_axi'")(axiOf(c))
        }
        else wanted.map(c => attempt(s"config '$c'")(named.find(_._1 == c).get._2()))
    }
    designs.foreach(d => println(attempt(s"config '${d.config}'")(Emit(o.out, d, o.prefix))))
  }
}
