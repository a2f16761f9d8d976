/** Service processes for tests that need real ones (a cluster on one Redis): `bun server.ts` with its own env. */
import { join } from 'node:path'
import { ADMIN_PASSWORD } from './service'

const root = join(import.meta.dir, '..', '..')

export interface ServiceProcess {
  proc: Bun.Subprocess<'ignore', 'pipe', 'pipe'>
  url: string
  port: number
  /** Everything the process printed so far. */
  out(): string
}

/**
 * Starts `bun server.ts` with `env` over the defaults and waits for its "listening" line. `launcher`
 * runs before it and execs it (`sh -c '... exec "$@"' sh`), so the pid stays the service's.
 */
export async function startProcess(env: Record<string, string>, launcher: string[] = []): Promise<ServiceProcess> {
  const proc = Bun.spawn([...launcher, process.execPath, 'server.ts'], {
    cwd: root,
    env: { ...process.env, PORT: '0', ADMIN_PASSWORD, LOG_LEVEL: 'info', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let out = ''
  const decoder = new TextDecoder()
  void (async () => {
    for await (const chunk of proc.stdout) out += decoder.decode(chunk)
  })()
  const until = Date.now() + 20_000
  while (!out.includes('"listening"') && Date.now() < until && proc.exitCode === null) await Bun.sleep(10)
  const url = /"url":"([^"]+)"/.exec(out)?.[1]
  if (!url) throw new Error(`the service did not start: ${out} ${await new Response(proc.stderr).text()}`)
  return { proc, url, port: Number(new URL(url).port), out: () => out }
}

/** A token session of the master administrator on a service process. */
export async function signInTo(node: ServiceProcess): Promise<string> {
  const res = await fetch(`${node.url}/rest/v1/iam/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ domain: 'master', login: 'admin', pwd: ADMIN_PASSWORD, session_type: 'token' }),
  })
  return ((await res.json()) as { session_token: string }).session_token
}

/** Whether a process of this pid still runs (signal 0 only asks). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
