/** What a row or an item page does with the API: its address, deleting it after confirmations. */
import { call } from './api'
import { confirm } from './dialogs'
import type { Session } from './session'
import type { Collection } from './spec'

export const itemUrl = (c: Collection, id: string) => `${c.path}/${encodeURIComponent(id)}`

/** Whether the row is the signed-in user. */
export const isSelf = (c: Collection, id: string, session: Session) =>
  c.key === 'domain/users' && id === session.user_id

/**
 * Delete after a confirmation naming what goes, and a second one when it is the signed-in user.
 * Answers whether it was deleted; an API error is thrown.
 */
export async function deleteItem(c: Collection, id: string, name: string, session: Session, etag?: string) {
  const sure = await confirm(
    `Delete this ${c.noun}?`,
    `The ${c.noun} “${name}” will be deleted. This cannot be undone.`,
    `Delete ${name}`,
  )
  if (!sure) return false
  if (isSelf(c, id, session)) {
    const really = await confirm(
      'Delete yourself?',
      `“${name}” is the user you are signed in as: deleting it ends this session and you will not be able to sign in as it again.`,
      'Yes, delete my own user',
    )
    if (!really) return false
  }
  await call('DELETE', itemUrl(c, id), undefined, etag ? { 'if-match': etag } : {})
  return true
}
