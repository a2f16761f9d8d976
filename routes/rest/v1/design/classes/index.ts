import { classes } from '~/model/classes'
import { syncClasses } from '~/model/sync-api'
import { create, list, lookup } from '~/http/resource'

export const GET = list(classes)
export const POST = create(classes)
export const LOOKUP = lookup(classes)
export const SYNC = syncClasses
