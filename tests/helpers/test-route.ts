/** What a test's own route declares besides its handler: a summary, and any JSON answer. */
import * as v from 'valibot'
import { answer } from '~/http/schemas'

export const TEST_ROUTE = { summary: 'a route of a test', response: { 200: answer(v.unknown()) } }
