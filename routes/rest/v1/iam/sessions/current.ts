import { deleteCurrentSession, getCurrentSession, switchDomain } from '~/identity/session-api'

export const GET = getCurrentSession
export const PATCH = switchDomain
export const DELETE = deleteCurrentSession
