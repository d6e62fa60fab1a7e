package xlat

import java.nio.file.{Files, Path, Paths}
import scala.util.matching.Regex
import chisel3.RawModule
import circt.stage.ChiselStage
import xlat.common.Json
import xlat.babelfish.{BabelFishParams, BabelFishTlb}
import xlat.walker.{NestedWalker, WalkerParams}
import xlat.pml.{PmlLogger, PmlParams, PmlRegs}

/** One configuration of one block: what the generator emits into `<out>/<config>/`. */
case class Design(config: String, block: String, module: String, params: Product, derived: Seq[(String, Any)])(
    val elaborate: () => RawModule,
    /** More manifest entries (e.g. a register map). */
    val extraManifest: Seq[(String, Any)] = Seq(),
    /** Files written beside the Verilog: (path relative to the configuration's folder, text). */
    val extraFiles: Seq[(String, String)] = Seq()
)

/** Blocks the generator knows: parameters from text, and the named configurations. */
object Blocks {
  def babelfish(config: String, p: BabelFishParams): Design =
    Design(config, "babelfish", "BabelFishTlb", p, p.derived)(() => new BabelFishTlb(p))

  private val formalBabelFish = BabelFishParams(
    sets = 2, ways = 2, superpageEntries = 2, vpnBits = 20, ppnBits = 27,
    pcidBits = 2, ccidBits = 2, pcBits = 3, formalPorts = true
  )
  private val l2BabelFish = BabelFishParams(sets = 128, ways = 12, superpageEntries = 16, storage = "sram")

  def walker(config: String, p: WalkerParams): Design =
    Design(config, "walker", "NestedWalker", p, p.derived)(() => new NestedWalker(p))

  def pml(config: String, p: PmlParams): Design =
    Design(config, "pml", "PmlLogger", p, p.derived)(
      () => new PmlLogger(p),
      extraManifest = Seq("registers" -> PmlRegs.json(p)),
      extraFiles = Seq("xlat_pml.h" -> PmlRegs.cHeader(p, config), "registers.md" -> PmlRegs.markdown(p)) ++
        (if (config == "pml_default") Seq("../../include/xlat_pml.h" -> PmlRegs.cHeader(p, config)) else Seq())
    )

  private val formalPml = PmlParams(
    contexts = 2, entries = 4, queueDepth = 2, idBits = 2, paBits = 32, vaBits = 39, vmidBits = 2, asidBits = 2,
    formalPorts = true
  )

  private val formalWalker = WalkerParams(
    guest = "sv39", host = "sv39x4", walkers = 2, guestPwcEntries = 2, hostPwcEntries = 2, nestedTlbEntries = 2,
    idBits = 2, asidBits = 2, vmidBits = 2, paBits = 32, formalPorts = true
  )

  /** Named configurations, built on demand so that one bad entry cannot stop the others. */
  val named: Seq[(String, () => Design)] = Seq(
    "babelfish_l1" -> (() => babelfish("babelfish_l1", BabelFishParams())),
    "babelfish_l1_noshare" -> (() => babelfish("babelfish_l1_noshare", BabelFishParams(sharing = false))),
    "babelfish_l2" -> (() => babelfish("babelfish_l2", l2BabelFish)),
    "babelfish_l2_noshare" -> (() => babelfish("babelfish_l2_noshare", l2BabelFish.copy(sharing = false))),
    "babelfish_formal" -> (() => babelfish("babelfish_formal", formalBabelFish)),
    "babelfish_formal_noshare" -> (() => babelfish("babelfish_formal_noshare", formalBabelFish.copy(sharing = false))),
    "walker_x86" -> (() => walker("walker_x86", WalkerParams())),
    "walker_x86_5" -> (() => walker("walker_x86_5", WalkerParams(guest = "x86_64_5", host = "ept5"))),
    "walker_rv39" -> (() => walker("walker_rv39", WalkerParams(guest = "sv39", host = "sv39x4"))),
    "walker_rv48" -> (() => walker("walker_rv48", WalkerParams(guest = "sv48", host = "sv48x4"))),
    "walker_baseline" -> (() =>
      walker("walker_baseline", WalkerParams(walkers = 1, guestPwcEntries = 0, hostPwcEntries = 0, nestedTlbEntries = 0))
    ),
    "walker_formal" -> (() => walker("walker_formal", formalWalker)),
    "pml_default" -> (() => pml("pml_default", PmlParams())),
    "pml_dedup" -> (() => pml("pml_dedup", PmlParams(dedupEntries = 8))),
    "pml_formal" -> (() => pml("pml_formal", formalPml))
  )

  val blocks: Map[String, (String, Map[String, String]) => Design] = Map(
    "babelfish" -> ((name, values) => babelfish(name, BabelFishParams.fromMap(values))),
    "walker" -> ((name, values) => walker(name, WalkerParams.fromMap(values))),
    "pml" -> ((name, values) => pml(name, PmlParams.fromMap(values)))
  )
}

/** Command-line generator.
  *
  * {{{
  * xlat.Generate [--out DIR] [--list] [--all | --config NAME ...]
  * xlat.Generate [--out DIR] --block BLOCK --name NAME [key=value ...]
  * xlat.Generate [--out DIR] --json FILE      (flat object: "block", "name" and parameters)
  * }}}
  * `--prefix P` (with any form) names every emitted module `P_<name>`, so that two
  * configurations of one block can be compiled into one design.
  * Writes `<out>/<name>/<Module>.sv`, `manifest.json` (parameters, derived values, ports with
  * widths) and `params.svh` (the same numbers as SystemVerilog localparams).
  */
object Generate {
  val firtoolOpts: Array[String] = Array("-disable-all-randomization", "-strip-debug-info", "--disable-layers=Verification",
    "--lowering-options=disallowLocalVariables,disallowPackedArrays")

  private def fail(msg: String): Nothing = {
    System.err.println(s"xlat.Generate: error: $msg")
    sys.exit(2)
  }

  /** The message of the first `require` (or argument error) behind an elaboration failure. */
  private def reason(t: Throwable): Option[String] = t match {
    case null                        => None
    case e: IllegalArgumentException => Some(e.getMessage.stripPrefix("requirement failed: "))
    case e                           => reason(e.getCause)
  }

  private def design(what: String)(make: => Design): Design =
    try make
    catch {
      case t: Throwable =>
        if (sys.env.contains("XLAT_DEBUG")) t.printStackTrace()
        fail(s"$what: ${reason(t).getOrElse(t.toString)}")
    }

  def main(args: Array[String]): Unit = {
    var out = Paths.get("build/rtl")
    var configs = Seq.empty[String]
    var block: Option[String] = None
    var name: Option[String] = None
    var json: Option[String] = None
    var values = Map.empty[String, String]
    var list = false
    var prefix: Option[String] = None
    var rest = args.toList
    while (rest.nonEmpty) {
      rest match {
        case "--out" :: d :: t    => out = Paths.get(d); rest = t
        case "--config" :: c :: t => configs :+= c; rest = t
        case "--all" :: t         => configs ++= Blocks.named.map(_._1); rest = t
        case "--block" :: b :: t  => block = Some(b); rest = t
        case "--name" :: n :: t   => name = Some(n); rest = t
        case "--json" :: f :: t   => json = Some(f); rest = t
        case "--list" :: t        => list = true; rest = t
        case "--prefix" :: x :: t =>
          if (!x.matches("[A-Za-z][A-Za-z0-9]*")) fail(s"--prefix must be letters and digits, got '$x'")
          prefix = Some(x); rest = t
        case kv :: t if kv.contains("=") && !kv.startsWith("-") =>
          val Array(k, v) = kv.split("=", 2); values += k -> v; rest = t
        case other :: _ => fail(s"unknown argument '$other' (see the header of Generate.scala)")
        case Nil        =>
      }
    }
    if (list) { Blocks.named.foreach(n => println(n._1)); return }

    val designs: Seq[Design] = json match {
      case Some(f) =>
        val text =
          try new String(Files.readAllBytes(Paths.get(f)))
          catch { case _: java.io.IOException => fail(s"cannot read parameter file '$f'") }
        val all =
          try Json.readFlat(text)
          catch { case e: IllegalArgumentException => fail(s"$f: ${e.getMessage}") }
        val b = all.getOrElse("block", fail(s"$f: missing \"block\""))
        val n = all.getOrElse("name", fail(s"$f: missing \"name\""))
        val mk = Blocks.blocks.getOrElse(b, fail(s"$f: unknown block '$b' (known: ${Blocks.blocks.keys.mkString(", ")})"))
        Seq(design(s"config '$n'")(mk(n, all - "block" - "name")))
      case None if block.isDefined =>
        val b = block.get
        val mk = Blocks.blocks.getOrElse(b, fail(s"unknown block '$b' (known: ${Blocks.blocks.keys.mkString(", ")})"))
        val n = name.getOrElse(s"${b}_custom")
        Seq(design(s"config '$n'")(mk(n, values)))
      case None =>
        val wanted = if (configs.isEmpty) Blocks.named.map(_._1) else configs
        wanted.map { c =>
          val mk = Blocks.named.toMap.getOrElse(c, fail(s"unknown configuration '$c' (see --list)"))
          design(s"config '$c'")(mk())
        }
    }
    designs.foreach(emit(out, _, prefix))
  }

  private val portLine: Regex = """^\s*(?:(input|output|inout)\s+(?:\[(\d+):0\]\s+)?)?(\w+)\s*,?\s*$""".r

  /** Ports of `module` as firtool printed them: (name, direction, width). firtool groups ports:
    * a line without a direction continues the previous line's direction and width.
    */
  def ports(sv: String, module: String): Seq[(String, String, Int)] = {
    val header = sv.linesIterator.dropWhile(!_.startsWith(s"module $module(")).drop(1).takeWhile(!_.startsWith(");"))
    var dir = ""
    var width = 1
    header.flatMap(l => portLine.findFirstMatchIn(l)).map { m =>
      if (m.group(1) != null) { dir = m.group(1); width = Option(m.group(2)).map(_.toInt + 1).getOrElse(1) }
      (m.group(3), dir, width)
    }.toSeq
  }

  private def upperSnake(s: String): String = s.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toUpperCase

  /** Writes one design; with `prefix` every module name starts with `<prefix>_`, so that
    * several configurations of one block (an L1 and an L2 TLB) can share one SoC.
    */
  def emit(out: Path, d: Design, prefix: Option[String] = None): Unit = {
    val module = prefix.map(x => s"${x}_${d.module}").getOrElse(d.module)
    val elaborate = () => prefix.map(x => chisel3.withModulePrefix(x)(d.elaborate())).getOrElse(d.elaborate())
    val t0 = System.nanoTime()
    val dir = out.resolve(d.config)
    if (Files.isDirectory(dir)) Files.list(dir).forEach(f => if (f.toString.endsWith(".sv")) Files.delete(f))
    Files.createDirectories(dir)
    val debug = if (sys.env.contains("XLAT_DEBUG")) Array("--full-stacktrace") else Array[String]()
    try ChiselStage.emitSystemVerilogFile(elaborate(), Array("--target-dir", dir.toString, "--split-verilog") ++ debug, firtoolOpts)
    catch {
      case t: Throwable =>
        if (debug.nonEmpty) t.printStackTrace()
        fail(s"config '${d.config}': ${reason(t).getOrElse(t.toString)}")
    }
    // One module a file; the top last so that a simple file list compiles in order.
    val file = s"$module.sv"
    val files = Files.list(dir).toArray.map(_.asInstanceOf[Path].getFileName.toString).filter(_.endsWith(".sv")).sorted
      .filter(_ != file) :+ file
    val sv = new String(Files.readAllBytes(dir.resolve(file)))
    val lines = files.map(f => Files.readAllLines(dir.resolve(f)).size).sum
    val params = d.params.productElementNames.zip(d.params.productIterator).toSeq
    val ps = ports(sv, module)
    val manifest = Json.Obj(
      (Seq(
        "config" -> d.config,
        "block" -> d.block,
        "module" -> module,
        "params" -> Json.Obj(params: _*),
        "derived" -> Json.Obj(d.derived: _*),
        "files" -> files.toSeq,
        "ports" -> ps.map { case (n, dir, w) => Json.Obj("name" -> n, "direction" -> dir, "width" -> w) }
      ) ++ d.extraManifest): _*
    )
    Files.write(dir.resolve("manifest.json"), (Json.write(manifest) + "\n").getBytes)
    for ((rel, text) <- d.extraFiles) {
      val f = dir.resolve(rel).normalize()
      Files.createDirectories(f.getParent)
      Files.write(f, text.getBytes)
    }
    val svh = (params ++ d.derived).collect {
      case (k, v: Int)     => s"localparam P_${upperSnake(k)} = $v;"
      case (k, v: Boolean) => s"localparam P_${upperSnake(k)} = ${if (v) 1 else 0};"
    }
    Files.write(
      dir.resolve("params.svh"),
      (s"// ${d.config}: generated by xlat.Generate from the same parameters as ${file}\n" + svh.mkString("\n") + "\n").getBytes
    )
    val ms = (System.nanoTime() - t0) / 1000000
    println(f"xlat.Generate: ${d.config}%-28s $module%-14s ${ps.size}%3d ports  ${files.size}%2d files  $lines%6d lines  $ms%5d ms  -> $dir")
  }
}
