/** The channel routes beyond the standard ones: a create that shows the signing secret once, and its rotation. */
import { defineRoute } from '../http/route'
import { channels, createChannel, rotateSecret } from './channels'

/** POST /rest/v1/service/integration_points: the stored channel plus `secret`, which no read shows again. */
export const createChannelRoute = defineRoute({
  domainKind: channels.domainKind,
  handle: async (req) => createChannel(req.ctx, await req.json()),
})

/** POST /rest/v1/service/integration_points/:id/secret: `{id, secret}`, the new secret; the old one stops counting. */
export const rotateSecretRoute = defineRoute({
  domainKind: channels.domainKind,
  handle: (req) => rotateSecret(req.ctx, req.uuidParam('id')),
})
