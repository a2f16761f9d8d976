/**
 * Query parameters as routes declare them: the list parameters every collection takes, declared
 * once, and the rule that a parameter an endpoint does not take is a 400 naming it (names starting
 * with `_` pass: clients add them to defeat caches). Values arrive as the strings of the URL; what
 * they name (fields of the collection, limits) is checked where the collection is known
 * (../query/list-query.ts). A query issue is told as a sentence beginning with the parameter's name
 * (./hooks/errors.ts).
 */
import * as v from 'valibot'
import { MAX_MASK_ITEMS, MAX_ORDER_ITEMS } from '../query/list-query'

const got = (issue: { input: unknown }) => `got ${JSON.stringify(issue.input)}`

/** `true`/`1`, `false`/`0`, or empty (false). */
export const BoolParam = v.pipe(
  v.string(),
  v.check(
    (s) => ['', 'true', 'false', '1', '0'].includes(s),
    (issue) => `must be true or false, ${got(issue)}`,
  ),
  v.metadata({ examples: ['true'] }),
)

export const CountParam = v.pipe(
  v.string(),
  v.regex(/^\d{1,16}$/, (issue) => `must be a non-negative integer, ${got(issue)}`),
)

/** The list parameters, shared by every collection's GET (what each means: docs/api/errors-and-lists.md). */
export const LIST_PARAMS = {
  filter: v.optional(
    v.pipe(
      v.string(),
      v.description(
        'JSON: an object of equalities on (dotted) field paths, {"type":"note"}, or an expression in prefix ' +
          'notation, ["and", ["==", ["property", "status"], "new"], [">", ["property", "ext.ct"], "2026-01-01"]]',
      ),
    ),
  ),
  mask: v.optional(
    v.pipe(
      v.string(),
      v.description(`comma list of at most ${MAX_MASK_ITEMS} field paths the items hold: id,opts.title`),
    ),
  ),
  order: v.optional(
    v.pipe(
      v.string(),
      v.description(`JSON array of at most ${MAX_ORDER_ITEMS} fields: ["name", "-ext.ct"] or [{"name": "desc"}]`),
    ),
  ),
  offset: v.optional(v.pipe(CountParam, v.description('items skipped (prefer `after`: its cost does not grow)'))),
  limit: v.optional(v.pipe(CountParam, v.description("items at most (the collection's default and maximum apply)"))),
  count: v.optional(v.pipe(BoolParam, v.description('true: the answer carries X-Total-Count'))),
  after: v.optional(v.pipe(v.string(), v.description('the X-Next-After of the previous page: the page after it'))),
  flat: v.optional(v.pipe(BoolParam, v.description('true: nested objects become dotted keys'))),
}

/** `mask` and `flat`: what a read of one item takes. */
export const ITEM_PARAMS = { mask: LIST_PARAMS.mask, flat: LIST_PARAMS.flat }

/**
 * The query of an endpoint that takes these parameters and no other: an unknown one is a 400
 * naming it and what the endpoint takes.
 */
export function queryOf<const E extends v.ObjectEntries>(entries: E): QuerySchema<E> {
  const names = Object.keys(entries)
  const takes = names.length ? `this endpoint takes ${names.join(', ')}` : 'this endpoint takes none'
  return v.pipe(
    v.looseObject(entries),
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed) return
      const input = dataset.value as Record<string, unknown>
      for (const key of Object.keys(input)) {
        if (key.startsWith('_') || names.includes(key)) continue
        addIssue({
          message: `unknown query parameter '${key}'; ${takes}`,
          path: [{ type: 'object', origin: 'key', input, key, value: input[key] }],
        })
        return
      }
    }),
  ) as unknown as QuerySchema<E>
}

/** A query's schema as the handler sees its output: the parameters it takes (others are refused). */
export type QuerySchema<E extends v.ObjectEntries> = v.GenericSchema<
  v.InferInput<v.ObjectSchema<E, undefined>>,
  v.InferOutput<v.ObjectSchema<E, undefined>>
>

/** The list parameters and `extra` ones. */
export const listQuery = <const E extends v.ObjectEntries = Record<never, never>>(extra: E = {} as E) =>
  queryOf({ ...LIST_PARAMS, ...extra })

/** A query of no parameters. */
export const NoQuery = queryOf({})

/**
 * A query that is not read: a probe or a page, which a load balancer or a mail service may call with
 * parameters of its own, answers the same whatever they are.
 */
export const IgnoredQuery = v.looseObject({})
