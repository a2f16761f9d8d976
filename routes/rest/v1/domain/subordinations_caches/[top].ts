import { readSubordination } from '~/directory/caches-api'

export const GET = readSubordination
