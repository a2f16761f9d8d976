/** Runs wrk (Debian package, installed on first use) and reads its figures. */
import { $ } from 'bun'

export async function ensureWrk(): Promise<void> {
  if (Bun.which('wrk')) return
  console.log('installing wrk from Debian packages ...')
  const sudo = process.getuid?.() === 0 ? '' : 'sudo '
  await $`${{ raw: sudo }}apt-get install -y wrk`.quiet().nothrow()
  if (!Bun.which('wrk')) throw new Error('wrk is not installed and apt-get could not install it (apt-get install wrk)')
}

export interface WrkResult {
  rps: number
  p50ms: number
  p99ms: number
  non2xx: number
}

const toMs = (v: string) => {
  const m = /^([\d.]+)(us|ms|s)$/.exec(v.trim())
  if (!m) return NaN
  const n = Number(m[1])
  return m[2] === 'us' ? n / 1000 : m[2] === 's' ? n * 1000 : n
}

export async function wrk(url: string, luaScript: string, seconds: number, connections = 64): Promise<WrkResult> {
  const out = await $`wrk -t2 -c${connections} -d${seconds}s --latency -s ${luaScript} ${url}`.text()
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1])
  const p50 = toMs(/\s50%\s+(\S+)/.exec(out)?.[1] ?? '')
  const p99 = toMs(/\s99%\s+(\S+)/.exec(out)?.[1] ?? '')
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0)
  return { rps, p50ms: p50, p99ms: p99, non2xx }
}

/** A wrk script sending GETs to random paths of the list (or POSTs of `post` to them), with the given headers. */
export function luaScript(paths: string[], headers: Record<string, string>, post?: unknown): string {
  const h = Object.entries(headers)
    .map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
    .join('\n')
  return `${h}
local paths = { ${paths.map((p) => JSON.stringify(p)).join(', ')} }
math.randomseed(os.time())
request = function()
  return wrk.format(${post === undefined ? '"GET", paths[math.random(#paths)]' : `"POST", paths[math.random(#paths)], nil, ${JSON.stringify(JSON.stringify(post))}`})
end
`
}
