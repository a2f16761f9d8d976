/** The answers the gateway gives itself, in the service's error body (the app's own use the same codes). */
import { newRequestId } from '../http/request-id'

const FAIL_BODY: Record<number, string> = {
  400: '{"error_code":1400,"error_message":"malformed HTTP request"}',
  408: '{"error_code":1408,"error_message":"request head not received in time"}',
  // the app answers a too-large body with the same status and code (payloadTooLarge: 2413, errors.ts)
  413: '{"error_code":2413,"error_message":"request body too large","error_details":{"field":"body"}}',
  431: '{"error_code":1431,"error_message":"request head too large"}',
  503: '{"error_code":1503,"error_message":"too many connections from this address; close some and try again"}',
}
const REASON: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Content Too Large',
  431: 'Request Header Fields Too Large',
  503: 'Service Unavailable',
}

/** The gateway's own answer with `status` (the connection ends after it), with a request id as every answer has. */
export const failResponse = (status: number) =>
  Buffer.from(
    `HTTP/1.1 ${status} ${REASON[status]}\r\ncontent-type: application/json\r\ncontent-length: ${FAIL_BODY[status]!.length}\r\nx-request-id: ${newRequestId()}\r\n${status === 503 ? 'retry-after: 1\r\n' : ''}connection: close\r\n\r\n${FAIL_BODY[status]}`,
  )

/** The app could not be reached for a request the gateway does not answer itself. */
export const badGateway = () =>
  Buffer.from(
    `HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nx-request-id: ${newRequestId()}\r\nconnection: close\r\n\r\n`,
  )
