/** The answers the credential flows' routes share (./invitations-api.ts, ./password-reset-api.ts, ./self-registration-api.ts): route-adapter material, like them. */
import * as v from 'valibot'
import { answer, errors } from '../http/schemas'

const Done = v.strictObject({
  error_code: v.literal(0),
  result: v.literal(true),
  result_msg: v.pipe(v.string(), v.description('what was done, in a sentence')),
})
/** 200 of a first step (a mail sent) or of a password change. */
export const DoneAnswer = answer(Done)
/** 200 of a second step: the account the link was for, by its domain's name and its login. */
export const DoneForAccountAnswer = answer(
  v.strictObject({ ...Done.entries, user: v.strictObject({ domain: v.string(), login: v.string() }) }),
)
/** 412: a field refused (error_code 1501, the field in error_details), or what the key names not found (1413). */
export const FIELD_ERRORS = errors(412)
/** 404: the request the link names is used, expired or unknown. */
export const LINK_ERRORS = errors(404, 412)
