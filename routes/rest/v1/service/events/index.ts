import { ingestEventsRoute } from '~/events/ingest-api'

export const POST = ingestEventsRoute
