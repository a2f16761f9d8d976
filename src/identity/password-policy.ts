/**
 * The password policy: allowed symbols A-Z a-z 0-9 _ - . ~ ! and the domain's minimum length
 * (setting `password_policy`). A violation is 412 with error_code 1501 naming the field.
 */
import type { Deps } from '../deps'
import { settingValue } from '../settings/settings'
import { fieldInvalid } from '../errors'

const ALLOWED = /^[A-Za-z0-9_\-.~!]*$/
/** Longer passwords only cost hashing time. */
export const MAX_PASSWORD_LENGTH = 256

export async function checkPasswordPolicy(deps: Deps, domainId: string, pwd: string, field = 'pwd'): Promise<void> {
  if (!ALLOWED.test(pwd))
    throw fieldInvalid(field, 'password may contain only A-Z a-z 0-9 and _ - . ~ !', { msg_code: 10101 })
  const { min_length } = await settingValue<{ min_length: number }>(deps, domainId, 'password_policy')
  if (pwd.length < min_length)
    throw fieldInvalid(field, `password must be at least ${min_length} characters long`, { msg_code: 10102 })
  if (pwd.length > MAX_PASSWORD_LENGTH)
    throw fieldInvalid(field, `password must be at most ${MAX_PASSWORD_LENGTH} characters long`, { msg_code: 10103 })
}
