// Log lines on stdout: encoded as they come, written in batches, none lost or cut at exit, whatever
// their size or characters, also when the process shares stdout (pieces of whole lines), and also
// when a thread of their own writes them (the service's way, src/log-thread.ts).
import { expect, test } from 'bun:test'
import { join } from 'node:path'

const root = join(import.meta.dir, '../..')

function run(setup: string, body: string) {
  const script = `
    import { shareStdout, stdoutLine, writeLinesOffThread } from ${JSON.stringify(join(root, 'src/log.ts'))}
    ${setup}
    ${body}
  `
  return Bun.spawnSync([process.execPath, '-e', script], { cwd: root })
}

const parsed = (stdout: Buffer) =>
  stdout
    .toString()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))

for (const shared of [false, true])
  for (const offThread of [false, true])
    test(`every line arrives whole and in order${shared ? ' (shared stdout)' : ''}${offThread ? ' (log thread)' : ''}`, () => {
      const setup = `${shared ? 'shareStdout();' : ''} ${offThread ? 'writeLinesOffThread();' : ''}`
      const done = run(
        setup,
        `for (let i = 0; i < 20000; i++) stdoutLine(JSON.stringify({ i, text: i % 7 ? 'plain' : 'ünïcødé ✓ 🚀' }))
         stdoutLine(JSON.stringify({ long: 'x'.repeat(600000) }))
         stdoutLine(JSON.stringify({ last: true }))`,
      )
      expect(done.exitCode).toBe(0)
      const lines = parsed(done.stdout)
      expect(lines.length).toBe(20002)
      lines.slice(0, 20000).forEach((l, i) => {
        expect(l.i).toBe(i)
        expect(l.text).toBe(i % 7 ? 'plain' : 'ünïcødé ✓ 🚀')
      })
      expect(lines[20000].long.length).toBe(600000)
      expect(lines[20001]).toEqual({ last: true })
    })

test('with the log thread, an error line and the lines before it are written before the process goes on: a kill right after loses none', () => {
  const killed = run(
    'writeLinesOffThread()',
    `for (let i = 0; i < 5000; i++) stdoutLine(JSON.stringify({ i }))
     stdoutLine(JSON.stringify({ level: 'error' }), true)
     process.kill(process.pid, 'SIGKILL')`,
  )
  expect(killed.signalCode).toBe('SIGKILL')
  const lines = parsed(killed.stdout)
  expect(lines.length).toBe(5001)
  expect(lines.at(-1)).toEqual({ level: 'error' })
})

test('with the log thread, a process that dies of an uncaught error still writes every line it had', () => {
  const crashed = run(
    'writeLinesOffThread()',
    `for (let i = 0; i < 5000; i++) stdoutLine(JSON.stringify({ i }))
     setTimeout(() => { throw new Error('boom') }, 1)`,
  )
  expect(crashed.exitCode).toBe(1)
  const lines = parsed(crashed.stdout)
  expect(lines.length).toBe(5000)
  expect(lines.at(-1)).toEqual({ i: 4999 })
})
