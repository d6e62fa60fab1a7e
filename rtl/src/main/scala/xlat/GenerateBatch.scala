package xlat

import java.io.{ByteArrayOutputStream, PrintStream}
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Paths}

/** Many [[Generate]] command lines in one JVM, for the generator's tests (tb/generator): starting
  * the JVM and loading Chisel costs about a second, more than most of those runs take.
  *
  * {{{
  * xlat.GenerateBatch JOBS RESULTS
  * }}}
  * JOBS is a JSON array of command lines (each an array of strings, as `xlat.Generate` takes
  * them); RESULTS gets one object per command line, in order: `code` (the exit code
  * `xlat.Generate` would end with), `stdout` and `stderr` (what that run printed). The runs are
  * independent (the generator keeps no state between designs, as `--all` relies on) and
  * sequential; their streams are captured one run at a time.
  */
object GenerateBatch {

  /** Runs `args` with System.out / System.err (and Scala's Console) captured. */
  private def captured(args: Seq[String]): ujson.Obj = {
    val (out, err) = (new ByteArrayOutputStream, new ByteArrayOutputStream)
    val (pOut, pErr) = (new PrintStream(out, true, UTF_8), new PrintStream(err, true, UTF_8))
    val (sOut, sErr) = (System.out, System.err)
    System.setOut(pOut)
    System.setErr(pErr)
    val code =
      try Console.withOut(pOut)(Console.withErr(pErr)(Generate.run(args)))
      catch { case t: Throwable => t.printStackTrace(pErr); 1 } // as an uncaught exception would end the JVM
      finally { System.setOut(sOut); System.setErr(sErr) }
    ujson.Obj("code" -> code, "stdout" -> out.toString(UTF_8), "stderr" -> err.toString(UTF_8))
  }

  def main(args: Array[String]): Unit = {
    if (args.length != 2) {
      System.err.println("usage: xlat.GenerateBatch JOBS.json RESULTS.json")
      sys.exit(2)
    }
    val jobs = ujson.read(Files.readString(Paths.get(args(0)))).arr.map(_.arr.map(_.str).toSeq)
    val results = ujson.Arr.from(jobs.map(captured))
    Files.writeString(Paths.get(args(1)), ujson.write(results))
  }
}
