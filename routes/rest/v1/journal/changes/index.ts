import { listChanges } from '~/journal/changes'

export const GET = listChanges
