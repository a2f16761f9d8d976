/**
 * The cases of bench/run.ts (the first bench of `npm run bench`): each a target server, the paths wrk takes at random, the
 * headers of a signed-in session, a body to POST instead of a GET, and BENCH_ONLY's group.
 */
import type { WrkResult } from './wrk'

export interface Target {
  url: string
  pid: number
  /** Where its stdout goes. */
  log: string
  stop(): Promise<void>
}

export interface Case {
  name: string
  target: Target
  paths: string[]
  headers: Record<string, string>
  /** BENCH_ONLY picks a case by its name or by this. */
  group?: string
  /** A body to POST to the paths instead of GETting them. */
  post?: unknown
  rounds: (WrkResult & { cpuUsPerReq: number })[]
}

/** What `seed` made in a service: a session's headers and the extobjs' ids. */
export interface Seeded {
  headers: Record<string, string>
  ids: string[]
}

type Servers = 'direct' | 'gateway' | 'workers2' | 'redis1'

/** Every case, the raw baseline first (ratios are to it); `modelRecords` is the model class's size. */
export function hotPathCases(
  targets: Record<Servers | 'raw' | 'front', Target>,
  seeded: Record<Servers, Seeded>,
  modelRecords: number,
): Case[] {
  const { raw, front, direct, gateway, workers2, redis1 } = targets
  const clustered = [
    { target: redis1, of: seeded.redis1, where: 'through the gateway, REDIS_URL' },
    { target: workers2, of: seeded.workers2, where: 'through the gateway, APP_PROCESSES=2 on REDIS_URL' },
  ]
  const point = (ids: string[]) => ids.map((id) => `/rest/v1/reference/extobjs/${id}`)
  const filtered = Array.from(
    { length: 20 },
    (_, i) => `/rest/v1/reference/extobjs?filter=${encodeURIComponent(JSON.stringify({ type: `type${i}` }))}&limit=20`,
  )
  const kinds = Array.from({ length: 20 }, (_, i) => encodeURIComponent(JSON.stringify({ kind: `k${i}` })))
  const modelFiltered = kinds.map((k) => `/rest/v1/model/bench/records?filter=${k}&limit=20`)
  const modelOrdered = kinds.map(
    (k) => `/rest/v1/model/bench/records?filter=${k}&order=${encodeURIComponent('["-n"]')}&limit=20`,
  )

  return [
    { name: 'raw Bun.serve JSON (baseline)', target: raw, paths: point(seeded.direct.ids), headers: {}, rounds: [] },
    // where a point read's time goes: the gateway's front with no app, then the app's least route
    {
      name: 'floor of the point read: the gateway front alone, constant answer',
      group: 'by id',
      target: front,
      paths: point(seeded.direct.ids),
      headers: seeded.gateway.headers,
      rounds: [],
    },
    {
      name: 'floor of the point read: GET /healthz through the gateway',
      group: 'by id',
      target: gateway,
      paths: ['/healthz'],
      headers: seeded.gateway.headers,
      rounds: [],
    },
    {
      name: 'GET extobj by id, direct (GATEWAY=off)',
      target: direct,
      paths: point(seeded.direct.ids),
      headers: seeded.direct.headers,
      rounds: [],
    },
    {
      name: 'GET extobj by id, through the gateway',
      target: gateway,
      paths: point(seeded.gateway.ids),
      headers: seeded.gateway.headers,
      rounds: [],
    },
    {
      name: 'GET extobj by id, through the gateway, APP_PROCESSES=2',
      group: 'redis',
      target: workers2,
      paths: point(seeded.workers2.ids),
      headers: seeded.workers2.headers,
      rounds: [],
    },
    {
      name: 'GET extobj by id, through the gateway, REDIS_URL',
      group: 'redis',
      target: redis1,
      paths: point(seeded.redis1.ids),
      headers: seeded.redis1.headers,
      rounds: [],
    },
    {
      name: 'GET extobjs filtered by type, limit 20, direct',
      target: direct,
      paths: filtered,
      headers: seeded.direct.headers,
      rounds: [],
    },
    {
      name: 'GET extobjs filtered by type, limit 20, through the gateway',
      target: gateway,
      paths: filtered,
      headers: seeded.gateway.headers,
      rounds: [],
    },
    ...clustered.map(({ target, of, where }) => ({
      name: `GET extobjs filtered by type, limit 20, ${where}`,
      group: 'redis',
      target,
      paths: filtered,
      headers: of.headers,
      rounds: [],
    })),
    ...[direct, gateway].flatMap((target) => {
      const where = target === direct ? 'direct' : 'through the gateway'
      const headers = target === direct ? seeded.direct.headers : seeded.gateway.headers
      return [
        { name: `model list of ${modelRecords} records: filter kind, limit 20, ${where}`, paths: modelFiltered },
        {
          name: `model list of ${modelRecords} records: filter kind, order -n, limit 20, ${where}`,
          paths: modelOrdered,
        },
      ].map((c) => ({ ...c, target, headers, rounds: [] }))
    }),
    ...[direct, gateway].map((target) => ({
      name: `POST extobj (create with its journal record), ${target === direct ? 'direct' : 'through the gateway'}`,
      group: 'POST',
      target,
      paths: ['/rest/v1/reference/extobjs'],
      headers: target === direct ? seeded.direct.headers : seeded.gateway.headers,
      post: { type: 'written', value: { n: 1, tags: ['a'] } },
      rounds: [],
    })),
    ...clustered.map(({ target, of, where }) => ({
      name: `POST extobj (create with its journal record), ${where}`,
      group: 'redis',
      target,
      paths: ['/rest/v1/reference/extobjs'],
      headers: of.headers,
      post: { type: 'written', value: { n: 1, tags: ['a'] } },
      rounds: [],
    })),
  ]
}
