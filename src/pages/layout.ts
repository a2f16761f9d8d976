/**
 * The system web pages (sign in, password recovery, invitations, self-registration): plain HTML
 * forms that call the REST API through one small script. No external assets; a strict content
 * security policy; no referrer, because the page address holds the secret request id.
 */
import { escapeHtml } from '../html'
import * as v from 'valibot'
import { NoQuery } from '../http/query-schemas'
import { defineRoute } from '../http/route'
import { answer } from '../http/schemas'

export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
}

export interface Field {
  name: string
  label: string
  type?: 'text' | 'password' | 'email'
  autocomplete: string
  required?: boolean
  hint?: string
}

/** A form the page script sends to the API: `{id}` in the path is the `id` of the page's address. */
export interface FormSpec {
  method: 'POST' | 'PATCH'
  api: string
  submit: string
  success: string
  fields: Field[]
  /** Ask for the new password twice. */
  confirmPassword?: boolean
  /** The page works only with an `id` in its address (a mailed link). */
  needsId?: boolean
}

function fieldHtml(f: Field): string {
  const hint = f.hint ? `<p class="hint" id="${f.name}-hint">${escapeHtml(f.hint)}</p>` : ''
  const described = f.hint ? ` aria-describedby="${f.name}-hint"` : ''
  return `<div class="field"><label for="${f.name}">${escapeHtml(f.label)}</label>${hint}<input id="${f.name}" name="${f.name}" type="${f.type ?? 'text'}" autocomplete="${f.autocomplete}"${f.required ? ' required' : ''}${described}></div>`
}

export function page(title: string, intro: string, form: FormSpec, after = ''): string {
  const fields = [...form.fields]
  if (form.confirmPassword)
    fields.push({
      name: 'confirm',
      label: 'Repeat the new password',
      type: 'password',
      autocomplete: 'new-password',
      required: true,
    })
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/pages/assets/pages.css">
<script src="/pages/assets/pages.js" defer></script>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(intro)}</p>
<form data-method="${form.method}" data-api="${form.api}" data-success="${escapeHtml(form.success)}"${form.confirmPassword ? ' data-confirm="pwd"' : ''}${form.needsId ? ' data-needs-id' : ''} novalidate>
${fields.map(fieldHtml).join('\n')}
<button type="submit">${escapeHtml(form.submit)}</button>
</form>
<div id="status" role="status" aria-live="polite"></div>
${after}
</main>
</body>
</html>`
}

/**
 * A page's address may carry the id of a mailed link, which its script reads. Other parameters are
 * ignored, as they always were: a browser user following a link a mail service added tracking
 * parameters to gets the page, not an API error.
 */
const PageQuery = v.looseObject({ id: v.optional(v.pipe(v.string(), v.description('the id of a mailed link'))) })

export function pageRoute(html: string, summary = 'A web page of the service') {
  return defineRoute({
    access: 'public',
    summary,
    hide: true,
    query: PageQuery,
    response: { 200: answer(v.string(), 'text/html') },
    handle: () => new Response(html, { headers: PAGE_HEADERS }),
  })
}

export function assetRoute(body: string, type: string, summary = 'An asset of the web pages') {
  return defineRoute({
    access: 'public',
    summary,
    hide: true,
    query: NoQuery,
    response: { 200: answer(v.string(), type.split(';')[0]!) },
    handle: () =>
      new Response(body, {
        headers: { 'content-type': type, 'x-content-type-options': 'nosniff', 'cache-control': 'max-age=300' },
      }),
  })
}
