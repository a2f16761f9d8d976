/** Value shapes shared by the directory entities. */
import * as v from 'valibot'

export const uuid = v.pipe(v.string(), v.uuid('must be a UUID'), v.toLowerCase())
export const uuidList = v.pipe(v.array(uuid), v.maxLength(1000, 'at most 1000 entries'))
export const roleName = v.pipe(
  v.string(),
  v.regex(/^[a-z][a-z0-9_]{0,63}$/, 'a role name is lowercase latin letters, digits and _ (starting with a letter)'),
)
export const roleList = v.pipe(v.array(roleName), v.maxLength(200, 'at most 200 roles'))
export const login = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9._@+-]{1,128}$/, 'a login is 1 to 128 letters, digits and . _ @ + -'),
)
export const email = v.pipe(
  v.string(),
  v.trim(),
  v.email('must be an e-mail address'),
  v.maxLength(254),
  v.toLowerCase(),
)
