package xlat.common

/** Parameters given as text (command line `key=value` or a flat JSON object) for one block.
  * Each getter falls back to the block's default and reports a malformed value by name.
  */
class ParamMap(block: String, values: Map[String, String], known: Seq[String]) {
  values.keys.filterNot(known.contains).foreach { k =>
    throw new IllegalArgumentException(s"unknown parameter '$k' for $block (known: ${known.mkString(", ")})")
  }

  def int(key: String, default: Int): Int = values.get(key) match {
    case None => default
    case Some(v) =>
      v.toIntOption.getOrElse(throw new IllegalArgumentException(s"$key must be an integer, got '$v'"))
  }

  def bool(key: String, default: Boolean): Boolean = values.get(key) match {
    case None                                        => default
    case Some(v) if v == "true" || v == "1"          => true
    case Some(v) if v == "false" || v == "0"         => false
    case Some(v) => throw new IllegalArgumentException(s"$key must be true or false, got '$v'")
  }

  def string(key: String, default: String): String = values.getOrElse(key, default)
}
