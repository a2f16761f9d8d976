/** Prometheus's own checker of the text format (`promtool check metrics`), from Debian's prometheus package. */
import { existsSync } from 'node:fs'

export const PROMTOOL = process.env.PROMTOOL_PATH ?? '/usr/bin/promtool'

/** What `promtool check metrics` says of an exposition: its exit code and its complaints (none when it passes). */
export async function promtoolCheck(text: string): Promise<{ code: number; problems: string }> {
  if (!existsSync(PROMTOOL))
    throw new Error(
      `promtool not found at ${PROMTOOL}: install Debian's prometheus (npm test does) or set PROMTOOL_PATH`,
    )
  const proc = Bun.spawn([PROMTOOL, 'check', 'metrics'], { stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' })
  proc.stdin.write(text)
  await proc.stdin.end()
  const [code, out, err] = await Promise.all([
    proc.exited,
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
  ])
  return { code, problems: (out + err).trim() }
}
