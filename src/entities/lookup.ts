/** LOOKUP over a collection or a class: the ids whose key fields equal a key. */
import type { ColumnRange, Repository } from '~storage/repository'
import { ApiError, badRequest } from '../errors'
import { isUuid } from '../ids'

/** A key and its other spelling: 5 also finds "5", and "5" also finds 5 (keys are stored either way). */
function keyForms(key: string | number): (string | number)[] {
  if (typeof key === 'number') return [key, String(key)]
  const n = Number(key)
  return key.trim() !== '' && Number.isFinite(n) && String(n) === key ? [key, n] : [key]
}

/**
 * The ids whose key fields equal a LOOKUP key (a JSON string or number); `id` is compared only
 * with keys that are UUIDs. Nothing found is 404 `lookup failed`.
 */
export async function lookupIds(
  repo: Repository,
  domain: string,
  fields: readonly string[],
  key: unknown,
  now?: number,
  range?: ColumnRange,
): Promise<string[]> {
  if (typeof key !== 'string' && typeof key !== 'number')
    throw badRequest('LOOKUP body must be a JSON string or number', 'body')
  const uuid = typeof key === 'string' && isUuid(key)
  const usable = fields.filter((f) => f !== 'id' || uuid)
  const ids = usable.length
    ? await repo.lookup(domain, usable, keyForms(uuid ? key.toLowerCase() : key), now, range)
    : []
  if (ids.length === 0) throw new ApiError(404, 'lookup failed')
  return ids
}
