// A script's syntax is checked on a thread of its own (src/scripts/script-syntax.ts): the main
// thread keeps serving while a large script compiles, a check has a time limit, and a script the
// parser fails on is refused without harming the checks after it.
import { expect, test } from 'bun:test'
import { SyntaxChecker } from '../../src/scripts/script-syntax'

/** About 4 MB of statements that parse. */
const large = `let x = 0\n${'x = x + 1 // some padding for the size\n'.repeat(100_000)}return x`

test('a large script is checked off the main thread: timers keep firing meanwhile', async () => {
  const checker = new SyntaxChecker()
  try {
    await checker.check('return 1') // the thread and its QuickJS module are ready
    let ticks = 0
    const timer = setInterval(() => ticks++, 5)
    const started = Date.now()
    const checked = await checker.check(large)
    clearInterval(timer)
    expect(checked).toEqual({ problem: null })
    // the check took a while, and the main thread was free all along
    expect(ticks).toBeGreaterThanOrEqual(Math.floor((Date.now() - started) / 5 / 4))
    expect(await checker.check('let a = 1\nlet a = 2')).toMatchObject({ problem: { line: 2 } })
  } finally {
    checker.stop()
  }
})

test('a check past its time limit is refused as unchecked; the next check gets a new thread', async () => {
  const checker = new SyntaxChecker(1)
  try {
    expect(await checker.check(large)).toEqual({ unchecked: 'its check took longer than 0.001 s' })
  } finally {
    checker.stop()
  }
  const patient = new SyntaxChecker()
  try {
    expect(await patient.check('return 1')).toEqual({ problem: null })
  } finally {
    patient.stop()
  }
})

test('a script nested past the parser stack is refused as unchecked, and the checks after it go on', async () => {
  const checker = new SyntaxChecker()
  try {
    const deep = checker.check('['.repeat(100_000))
    const after = checker.check('foo(')
    expect(await deep).toMatchObject({ unchecked: expect.stringContaining('the parser failed on it') })
    expect(await after).toMatchObject({ problem: { line: 1 } })
  } finally {
    checker.stop()
  }
})
