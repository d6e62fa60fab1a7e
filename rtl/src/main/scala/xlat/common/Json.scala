package xlat.common

/** The little JSON the generator needs: writing manifests and reading flat parameter files. */
object Json {

  /** A JSON object whose fields keep their order. */
  case class Obj(fields: (String, Any)*)

  def write(v: Any, indent: String = ""): String = {
    val in = indent + "  "
    v match {
      case Obj() => "{}"
      case o: Obj =>
        o.fields.map { case (k, x) => s"$in${quote(k)}: ${write(x, in)}" }.mkString("{\n", ",\n", s"\n$indent}")
      case s: Seq[_] if s.isEmpty => "[]"
      case s: Seq[_]              => s.map(x => in + write(x, in)).mkString("[\n", ",\n", s"\n$indent]")
      case s: String              => quote(s)
      case b: Boolean             => b.toString
      case n: Int                 => n.toString
      case n: Long                => n.toString
      case n: BigInt              => n.toString
      case other                  => quote(other.toString)
    }
  }

  private def quote(s: String): String =
    "\"" + s.flatMap {
      case '"'           => "\\\""
      case '\\'          => "\\\\"
      case '\n'          => "\\n"
      case c if c < ' '  => f"\\u${c.toInt}%04x"
      case c             => c.toString
    } + "\""

  /** Reads a flat object `{"k": value, ...}` whose values are strings, numbers or booleans. */
  def readFlat(text: String): Map[String, String] = {
    val body = text.trim
    if (!body.startsWith("{") || !body.endsWith("}"))
      throw new IllegalArgumentException("parameter file must hold one flat JSON object")
    val pair = """\s*"([^"]+)"\s*:\s*("([^"]*)"|[-0-9A-Za-z_.]+)\s*""".r
    val inner = body.substring(1, body.length - 1).trim
    if (inner.isEmpty) Map()
    else
      inner.split(",").toSeq.map {
        case pair(k, raw, str) => k -> (if (str != null) str else raw)
        case bad => throw new IllegalArgumentException(s"cannot read '${bad.trim}' in parameter file (flat JSON only)")
      }.toMap
  }
}
