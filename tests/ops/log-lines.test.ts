// Log lines on stdout: encoded as they come, written in batches, none lost or cut at exit, whatever
// their size or characters, also when the process shares stdout (pieces of whole lines).
import { expect, test } from 'bun:test'
import { join } from 'node:path'

const root = join(import.meta.dir, '../..')

function linesOf(shared: boolean) {
  const script = `
    import { shareStdout, stdoutLine } from ${JSON.stringify(join(root, 'src/log.ts'))}
    if (${shared}) shareStdout()
    for (let i = 0; i < 20000; i++) stdoutLine(JSON.stringify({ i, text: i % 7 ? 'plain' : 'ünïcødé ✓ 🚀' }))
    stdoutLine(JSON.stringify({ long: 'x'.repeat(600000) }))
    stdoutLine(JSON.stringify({ last: true }))
  `
  const run = Bun.spawnSync([process.execPath, '-e', script], { cwd: root })
  expect(run.exitCode).toBe(0)
  return run.stdout
    .toString()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
}

for (const shared of [false, true])
  test(`every line arrives whole and in order${shared ? ' (shared stdout)' : ''}`, () => {
    const lines = linesOf(shared)
    expect(lines.length).toBe(20002)
    lines.slice(0, 20000).forEach((l, i) => {
      expect(l.i).toBe(i)
      expect(l.text).toBe(i % 7 ? 'plain' : 'ünïcødé ✓ 🚀')
    })
    expect(lines[20000].long.length).toBe(600000)
    expect(lines[20001]).toEqual({ last: true })
  })
