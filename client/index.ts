/**
 * A typed client of the service for TypeScript callers: Eden treaty over the app's type (app.ts),
 * so a call with a wrong path, parameter, body member or answer member fails the type check.
 * LOOKUP, SYNC and CLEAR are called with `lookup`, `sync` and `clear` (treaty calls the methods it
 * knows only; these travel as POST with X-HTTP-Method-Override). Records of model classes, which
 * each domain defines at run time, are reached by `modelRecords` with the record type the caller
 * gives.
 */
import { type Treaty, treaty } from '@elysiajs/eden'
import type { App } from '../app'

export interface ClientOptions {
  /** A session token (the answer to a token sign-in) or an integration channel's token. */
  token?: string
  /** Headers sent with every call. */
  headers?: Record<string, string>
  fetcher?: typeof fetch
}

export type PlatformClient = ReturnType<typeof platformClient>

export function platformClient(baseUrl: string, options: ClientOptions = {}) {
  return treaty<App>(baseUrl, {
    fetcher: options.fetcher,
    headers: { ...options.headers, ...(options.token ? { authorization: `Bearer ${options.token}` } : {}) },
  })
}

/** A treaty node that serves `method`; what calling it takes, and answers. */
type Serving<M extends string> = { [K in M]: (body: never, ...rest: never[]) => Promise<unknown> }
type BodyOf<N, M extends string> = N extends { [K in M]: (body: infer B, ...rest: never[]) => unknown } ? B : never
type AnswerOf<N, M extends string> = N extends { [K in M]: (...args: never[]) => infer R } ? R : never

/** `method` on the node's URL: a POST naming it in X-HTTP-Method-Override, its body as JSON. */
function overridden(node: unknown, method: string, body: unknown): Promise<unknown> {
  const headers = { 'x-http-method-override': method, 'content-type': 'application/json' }
  // the body goes as its JSON text: treaty would send a bare string as text/plain
  const post = (node as { post(body: unknown, options: object): Promise<unknown> }).post
  return post(body === undefined ? undefined : JSON.stringify(body), { headers })
}

/** LOOKUP on a collection: the ids whose key fields equal `key`. */
export const lookup = <N extends Serving<'LOOKUP'>>(node: N, key: BodyOf<N, 'LOOKUP'>) =>
  overridden(node, 'LOOKUP', key) as AnswerOf<N, 'LOOKUP'>

/** SYNC on a collection (the data model's classes: wait until every process uses them). */
export const sync = <N extends Serving<'SYNC'>>(node: N, body?: BodyOf<N, 'SYNC'>) =>
  overridden(node, 'SYNC', body) as AnswerOf<N, 'SYNC'>

/** CLEAR on a collection: every item goes. */
export const clear = <N extends Serving<'CLEAR'>>(node: N) =>
  overridden(node, 'CLEAR', undefined) as AnswerOf<N, 'CLEAR'>

/** What every model record carries besides the class's properties. */
export interface RecordStamps {
  id: string
  ext: { ct: string; lwt: string; [member: string]: unknown }
}

type Answer<T> = Promise<Treaty.TreatyResponse<{ 200: T }>>

/**
 * The records of the model class `classpath` (`crm/deals`), typed as `R` (its properties): what
 * the API description says of the class for a signed-in caller of its domain.
 */
export function modelRecords<R extends object>(client: PlatformClient, classpath: string) {
  // treaty builds the URL from the members it is asked for: the classpath's segments are members
  // biome-ignore lint/suspicious/noExplicitAny: the class's path is known at run time only
  let collection: any = client.rest.v1.model
  for (const segment of classpath.split('/')) collection = collection[segment]
  const record = (id: string) => collection({ id })
  type Stored = R & RecordStamps
  return {
    list: (query?: Record<string, string>): Answer<Partial<Stored>[]> => collection.get({ query }),
    create: (body: R & { id?: string }): Answer<Stored> => collection.post(body),
    read: (id: string): Answer<Stored> => record(id).get(),
    change: (id: string, body: Partial<R>): Answer<Stored> => record(id).patch(body),
    replace: (id: string, body: R): Answer<Stored> => record(id).put(body),
    remove: (id: string): Promise<Treaty.TreatyResponse<{ 204: undefined }>> => record(id).delete(),
    lookup: (key: string | number) => overridden(collection, 'LOOKUP', key) as Answer<string[]>,
  }
}
