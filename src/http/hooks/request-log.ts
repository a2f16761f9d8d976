/**
 * Once an answer is made (./answers.ts): the request's duration into the metrics, and one JSON log
 * line for the share LOG_REQUESTS asks (whether a request is logged is decided when it starts, in
 * ./call.ts, so its client address is read while its socket is there).
 */
import type { Deps } from '../../deps'
import type { Req } from '../req'
import { wireMethod } from './call'

export function logRequest(deps: Deps) {
  return (req: Req) => {
    const answer = req.answered!
    const seconds = (req.finished - req.started) / 1000
    const route = req.route || 'unmatched'
    const request = req.request
    const method = wireMethod(request)
    deps.metrics.observe(route, method, answer.status, seconds)
    if (!req.logged) return
    const actor = req.isAdmitted ? req.ctx : undefined
    deps.log.request({
      id: req.requestId,
      method,
      route,
      status: answer.status,
      ms: Math.round(seconds * 1e5) / 100,
      bytes: answer.bytes,
      actor: actor?.actor.id,
      domain: actor?.domain,
      client: req.clientAddress,
    })
  }
}
