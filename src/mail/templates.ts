/** The messages the service sends: plain text and a simple HTML version, each with its link. */

import { escapeHtml } from '../html'

function message(
  subject: string,
  lines: string[],
  link: string,
  action: string,
): { subject: string; text: string; html: string } {
  const text = [...lines, '', `${action}: ${link}`, '', 'If you did not expect this message, ignore it.'].join('\n')
  const html = `<!doctype html><html><body style="font-family: sans-serif">${lines.map((l) => `<p>${escapeHtml(l)}</p>`).join('')}<p><a href="${escapeHtml(link)}">${escapeHtml(action)}</a></p><p style="color:#555">If the link does not open, copy this address into your browser: ${escapeHtml(link)}</p><p style="color:#555">If you did not expect this message, ignore it.</p></body></html>`
  return { subject, text, html }
}

export const resetPasswordMail = (link: string, login: string, domain: string) =>
  message(
    'Reset your password',
    [`A new password was requested for the account ${login} in ${domain}.`, 'The link is valid for one hour.'],
    link,
    'Set a new password',
  )

export const invitationMail = (link: string, login: string, domain: string, inviter: string) =>
  message(
    `Invitation to ${domain}`,
    [`${inviter} invites you to sign in to ${domain} as ${login}.`, 'The link is valid for three days.'],
    link,
    'Accept the invitation',
  )

export const selfRegistrationMail = (link: string, login: string, domain: string) =>
  message(
    `Confirm your registration in ${domain}`,
    [`You asked to register the account ${login} in ${domain}.`, 'The link is valid for one day.'],
    link,
    'Confirm and choose a password',
  )
