/** Identifiers: entity ids are UUIDs (time-ordered when the service makes them); the nil UUID means "none". */
import { badRequest } from './errors'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
export const NIL_UUID = '00000000-0000-0000-0000-000000000000'

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value)
}

/** A new time-ordered id (UUIDv7 layout). */
export const newId = (): string => Bun.randomUUIDv7()

/** The id a client gave on create, lower-cased; a 400 naming `field` unless it is a UUID other than the nil one. */
export function givenId(value: unknown, field = 'id'): string {
  if (!isUuid(value)) throw badRequest(`${field} must be a UUID, got ${JSON.stringify(value)}`, field)
  if (value === NIL_UUID) throw badRequest(`${field} must not be the nil UUID`, field)
  return value.toLowerCase()
}
