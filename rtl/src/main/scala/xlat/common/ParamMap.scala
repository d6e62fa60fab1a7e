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

object ParamMap {
  /** A block's parameter case class built from text values: each parameter named in `values`
    * replaces the default in `defaults`, parsed by the default's type (Int, Boolean, String).
    * The case class's own `require`s then check the result, as for any other construction.
    */
  def build[P <: Product](block: String, defaults: P, values: Map[String, String]): P = {
    val names = defaults.productElementNames.toSeq
    val m = new ParamMap(block, values, names)
    val args = names.zip(defaults.productIterator).map {
      case (k, v: Int)     => Int.box(m.int(k, v))
      case (k, v: Boolean) => Boolean.box(m.bool(k, v))
      case (k, v: String)  => m.string(k, v)
      case (k, v)          => throw new IllegalArgumentException(s"$block: parameter '$k' of type ${v.getClass} cannot be set from text")
    }
    val ctor = defaults.getClass.getConstructors.find(_.getParameterCount == names.size).get
    try ctor.newInstance(args: _*).asInstanceOf[P]
    catch { case e: java.lang.reflect.InvocationTargetException => throw e.getCause }
  }
}
