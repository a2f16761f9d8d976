/** A service process for the benches: `bun server.ts` on a fresh data directory, and a token session of its administrator. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const root = join(import.meta.dir, '..')
export const BENCH_PASSWORD = 'bench-Pass1'

export interface BenchService {
  url: string
  pid: number
  /** A token session of the master administrator. */
  token: string
  stop(): Promise<void>
}

/**
 * Starts the service with `env` over the benches' defaults (direct listener, info log for the line
 * naming its URL) and `bunArgs` before the entry (a profiler), then signs in.
 */
export async function startBenchService(
  env: Record<string, string> = {},
  bunArgs: string[] = [],
): Promise<BenchService> {
  const work = mkdtempSync(join(tmpdir(), 'platform-bench-'))
  const proc = Bun.spawn([process.execPath, ...bunArgs, 'server.ts'], {
    cwd: root,
    env: {
      ...process.env,
      DATA_DIR: work,
      PORT: '0',
      GATEWAY: 'off',
      ADMIN_PASSWORD: BENCH_PASSWORD,
      LOG_LEVEL: 'info',
      ...env,
    },
    stdout: 'pipe',
    stderr: 'inherit',
  })
  const stop = async () => {
    proc.kill()
    await proc.exited
    rmSync(work, { recursive: true, force: true })
  }
  try {
    const reader = proc.stdout.getReader()
    let out = ''
    while (!/"url":"(http:[^"]+)"/.test(out)) {
      const { value, done } = await reader.read()
      if (done) throw new Error(`the service did not start:\n${out}`)
      out += new TextDecoder().decode(value)
    }
    // keep reading stdout so a chatty log never fills the pipe and stalls the service
    void (async () => {
      while (!(await reader.read()).done);
    })()
    const url = /"url":"(http:[^"]+)"/.exec(out)![1]!
    const login = await fetch(`${url}/rest/v1/iam/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ domain: 'master', login: 'admin', pwd: BENCH_PASSWORD, session_type: 'token' }),
    })
    const { session_token: token } = (await login.json()) as { session_token: string }
    return { url, pid: proc.pid, token, stop }
  } catch (err) {
    await stop()
    throw err
  }
}

/** A process's resident memory in KiB, from /proc. */
export async function rssKb(pid: number): Promise<number> {
  return Number(/VmRSS:\s+(\d+)/.exec(await Bun.file(`/proc/${pid}/status`).text())![1])
}

/** CPU seconds (user + system, all threads) a process and its children (APP_PROCESSES > 1) have used so far, from /proc. */
export async function cpuSeconds(pid: number): Promise<number> {
  const fields = (await Bun.file(`/proc/${pid}/stat`).text()).split(') ')[1]!.split(' ')
  const own = (Number(fields[11]) + Number(fields[12])) / 100 // utime, stime in clock ticks (USER_HZ = 100)
  const children = (await Bun.file(`/proc/${pid}/task/${pid}/children`).text()).trim().split(/\s+/).filter(Boolean)
  return own + (await Promise.all(children.map((c) => cpuSeconds(Number(c))))).reduce((a, b) => a + b, 0)
}

/** The value at fraction `p` of sorted values. */
export const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!
