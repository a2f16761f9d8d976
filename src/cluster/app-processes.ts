/**
 * APP_PROCESSES=N: the process `npm start` began serves requests itself and starts N - 1 more app
 * processes, each with its own gateway on the same public port (SO_REUSEPORT): the kernel spreads
 * client connections over them. They share the database file (opened `shared`) and Redis, through which sessions,
 * bans, limits, locks and cache invalidations already hold across processes. This process watches
 * them: one that dies is started again (one that was asked to end, and exits 0, is not), and at a
 * stop they get SIGTERM and their grace period.
 *
 * A started process learns its part from PLATFORM_APP_PORT / PLATFORM_APP_INDEX, and ends itself
 * when its standard input closes: the process that started it is gone (even by kill -9).
 *
 * A scrape of /metrics reaches whichever process the kernel gives the connection: that one answers
 * the figures of all of them. The first asks the others over their IPC channels; another asks the
 * first, which adds its own and those of the rest (`shareFigures`). A process that does not answer
 * within FIGURES_WAIT_MS is left out of that answer.
 */
import { join } from 'node:path'
import type { Logger } from '../log'
import type { ProcessFigures } from '../ops/metrics'
import { StartError } from '../startup'

/** What a started app process is told through its environment. */
export interface AppProcessRole {
  index: number
  /** The public port, which the first process bound (it may have been 0 in the configuration). */
  port: number
}

/** The role of this process when another started it, from its environment; null for the first one. */
export function appProcessRole(env: Record<string, string | undefined> = process.env): AppProcessRole | null {
  const port = env.PLATFORM_APP_PORT
  if (!port) return null
  return { index: Number(env.PLATFORM_APP_INDEX ?? 1), port: Number(port) }
}

/** Exits (after `stop`) once the starting process is gone: its end of our standard input closes. */
export function endWithParent(stop: () => Promise<void>): void {
  void (async () => {
    const reader = Bun.stdin.stream().getReader()
    while (!(await reader.read()).done) {} // nothing is ever sent: this waits for the end
    await stop().catch(() => {})
    process.exit(0)
  })()
}

const compiled = () => Bun.main.startsWith('/$bunfs/') || Bun.main.includes('~BUN')

/**
 * The command that started this process: `bun [flags] server.ts ...` (its runtime flags too, such as
 * a profiler's, but a debugger's, whose port only one process can listen on, and a file watcher's,
 * which would restart a started process behind the back of this one), or the single binary with
 * its arguments.
 */
function ownCommand(): string[] {
  if (compiled()) return [process.execPath, ...process.argv.slice(2)]
  const flags = process.execArgv.filter((flag) => !/^--(inspect|watch|hot)/.test(flag))
  return [process.execPath, ...flags, Bun.main, ...process.argv.slice(2)]
}

/** The service's command without arguments, whatever started this process (a test runner too). */
export function serviceCommand(): string[] {
  return compiled() ? [process.execPath] : [process.execPath, join(import.meta.dir, '..', '..', 'server.ts')]
}

/** How long a new process may take to listen before the start fails. */
const READY_TIMEOUT_MS = 30_000
/** The first pause before a process that died is started again. */
const FIRST_RESTART_PAUSE_MS = 1000
/** How long the first process waits for another's figures (a scrape of /metrics). */
const FIGURES_WAIT_MS = 2000

/** What the processes of one service say to each other over their IPC channels. */
type Message =
  | { type: 'listening' }
  /** another process asks the first for the figures of all but itself */
  | { type: 'figures?'; id: number }
  | { type: 'figures'; id: number; sets: ProcessFigures[] }
  /** the first asks another for its own figures */
  | { type: 'own-figures?'; id: number }
  | { type: 'own-figures'; id: number; figures: ProcessFigures }

/** Answers to questions sent over IPC, by the question's id; an answer not there in `ms` is `fallback`. */
class Questions<A> {
  private next = 0
  private readonly waiting = new Map<number, (answer: A) => void>()

  ask(send: (id: number) => void, ms: number, fallback: A): Promise<A> {
    const id = ++this.next
    return new Promise<A>((resolve) => {
      const timer = setTimeout(() => done(fallback), ms)
      const done = (answer: A) => {
        clearTimeout(timer)
        this.waiting.delete(id)
        resolve(answer)
      }
      this.waiting.set(id, done)
      try {
        send(id)
      } catch {
        done(fallback) // the channel is closed: the process is gone
      }
    })
  }

  answered(id: number, answer: A): void {
    this.waiting.get(id)?.(answer)
  }
}

/**
 * In a started app process: answers the first process's questions for this one's figures, and
 * answers how to get the others' (through the first, which adds its own).
 */
export function shareFigures(own: () => Promise<ProcessFigures>): () => Promise<ProcessFigures[]> {
  const questions = new Questions<ProcessFigures[]>()
  process.on('message', (message: Message) => {
    if (message.type === 'own-figures?')
      void own()
        .then((figures) => process.send?.({ type: 'own-figures', id: message.id, figures } satisfies Message))
        .catch(() => {}) // the channel closed meanwhile: the first process is gone
    else if (message.type === 'figures') questions.answered(message.id, message.sets)
  })
  return () =>
    questions.ask(
      (id) => process.send?.({ type: 'figures?', id } satisfies Message),
      FIGURES_WAIT_MS + 1000,
      [], // the first process does not answer: this one's own figures go out alone
    )
}

export interface AppProcesses {
  /** SIGTERM to each; resolves when all have exited, or after `graceMs` + 5 s (then SIGKILL). */
  stop(graceMs: number): Promise<void>
  /** The figures of every other app process that answers in time (a scrape of the first). */
  figures(): Promise<ProcessFigures[]>
}

/**
 * Starts `count` app processes on the public `port` and resolves once each one accepts connections.
 * One that dies is started again after a pause growing up to `maxPauseMs` (APP_RESTART_MAX_MS).
 * `ownFigures` are this process's metrics, which another process answering a scrape asks for.
 */
export async function startAppProcesses(
  count: number,
  port: number,
  log: Logger,
  maxPauseMs = 30_000,
  ownFigures: () => Promise<ProcessFigures> = async () => [],
): Promise<AppProcesses> {
  const firstPause = Math.min(FIRST_RESTART_PAUSE_MS, maxPauseMs)
  let stopping = false
  let starting = true
  let startFailed = (_err: Error) => {}
  const failedStart = new Promise<never>((_, reject) => (startFailed = reject))
  const running = new Map<number, Bun.Subprocess>()
  /** The processes that accept connections, those asked for figures. */
  const listeners = new Map<number, Bun.Subprocess>()
  const questions = new Questions<ProcessFigures | null>()
  /** The figures of the listening processes but `except`, each within FIGURES_WAIT_MS. */
  const others = async (except?: number) => {
    const asked = [...listeners]
      .filter(([index]) => index !== except)
      .map(([, child]) =>
        questions.ask((id) => child.send({ type: 'own-figures?', id } satisfies Message), FIGURES_WAIT_MS, null),
      )
    return (await Promise.all(asked)).filter((f) => f !== null)
  }
  function spawn(index: number, pause = firstPause): Promise<void> {
    let ready = () => {}
    const listening = new Promise<void>((resolve) => (ready = resolve))
    const startedAt = Date.now()
    const child = Bun.spawn(ownCommand(), {
      env: { ...process.env, PLATFORM_APP_PORT: String(port), PLATFORM_APP_INDEX: String(index) },
      stdin: 'pipe', // never written: its end tells the child that this process is gone
      stdout: 'inherit',
      stderr: 'inherit',
      ipc(message: Message, from) {
        if (message.type === 'listening') {
          listeners.set(index, child)
          ready()
        } else if (message.type === 'own-figures') questions.answered(message.id, message.figures)
        else if (message.type === 'figures?')
          void Promise.all([ownFigures(), others(index)])
            .then(([own, rest]) =>
              from.send({ type: 'figures', id: message.id, sets: [own, ...rest] } satisfies Message),
            )
            .catch(() => {}) // it is gone meanwhile
      },
      onExit(_proc, code, signal) {
        running.delete(index)
        if (listeners.get(index) === child) listeners.delete(index)
        if (stopping) return
        if (starting)
          return startFailed(
            new StartError('APP_PROCESSES', `app process ${index} exited while starting (code ${code})`),
          )
        // a clean exit was asked for (DELETE /rest/v1/master/nodes/<name>): the others serve on
        if (code === 0) return log.info('app process ended on request; not started again', { index })
        // a crash loop backs off instead of spinning; a process that ran a while starts the count again
        const wait = Date.now() - startedAt > maxPauseMs ? firstPause : pause
        log.error('app process ended; starting it again', { index, code, signal, pauseMs: wait })
        setTimeout(() => {
          if (!stopping) void spawn(index, Math.min(wait * 2, maxPauseMs))
        }, wait)
      },
    })
    running.set(index, child)
    return listening
  }

  let timer: Timer | undefined
  const tooLate = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(new StartError('APP_PROCESSES', `the app processes did not listen within ${READY_TIMEOUT_MS / 1000} s`)),
      READY_TIMEOUT_MS,
    )
  })
  try {
    const all = Array.from({ length: count }, (_, i) => spawn(i + 1))
    await Promise.race([Promise.all(all), tooLate, failedStart])
  } catch (err) {
    stopping = true
    for (const child of running.values()) child.kill('SIGKILL')
    throw err
  } finally {
    clearTimeout(timer)
    starting = false
  }

  return {
    async stop(graceMs) {
      stopping = true
      const exits = [...running.values()].map((child) => {
        child.kill('SIGTERM')
        return child.exited
      })
      const late = setTimeout(() => {
        for (const child of running.values()) child.kill('SIGKILL')
      }, graceMs + 5000)
      await Promise.all(exits)
      clearTimeout(late)
    },
    figures: () => others(),
  }
}
