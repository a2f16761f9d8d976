import { extobjsOfType } from '~/reference/extobjs-api'

export const GET = extobjsOfType
