import { listChanges } from '~/journal/changes-api'

export const GET = listChanges
