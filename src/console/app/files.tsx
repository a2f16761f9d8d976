/**
 * Uploading channel files (`POST /rest/v1/fs/targets/token`, multipart/form-data): each chosen file
 * is stored under its name, never over an existing one; the answer says per file how it went.
 */
import { useState } from 'preact/hooks'
import { ApiError, call, errorText } from './api'
import { href } from './router'
import type { Collection } from './spec'
import { ErrorNote } from './error-note'

interface Result {
  name: string
  size: number
  status: string
}

const SAID: Record<string, string> = {
  ok: 'stored',
  exists: 'not stored: a file of that name exists',
  invalid_name: 'not stored: the name is not allowed',
  over_quota: "not stored: the domain's files quota is full",
}

export function UploadPage(props: { collection: Collection }) {
  const c = props.collection
  const [files, setFiles] = useState<File[]>([])
  const [results, setResults] = useState<Result[] | null>(null)
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)

  const submit = async (e: Event) => {
    e.preventDefault()
    setError('')
    if (!files.length) return setError('Choose at least one file.')
    const form = new FormData()
    for (const f of files) form.append('file', f, f.name)
    setBusy(true)
    try {
      setResults((await call<Result[]>('POST', c.path, form)).data)
    } catch (err) {
      setError(errorText(err))
      const details = err instanceof ApiError ? err.details?.files : undefined
      if (Array.isArray(details)) setResults(details as Result[])
    } finally {
      setBusy(false)
    }
  }
  return (
    <section aria-labelledby="page-title">
      <p class="crumbs">
        <a href={href.list(c.key)}>{c.title}</a>
      </p>
      <h1 id="page-title">Upload files</h1>
      <form class="form" onSubmit={submit} noValidate>
        <div class="field">
          <label for="upload-files">Files</label>
          <input
            id="upload-files"
            type="file"
            multiple
            aria-describedby="upload-files-hint"
            onChange={(e) => setFiles([...(e.currentTarget.files ?? [])])}
          />
          <small class="hint" id="upload-files-hint">
            Each is stored under its name; a file of the same name is kept as it is.
          </small>
        </div>
        <ErrorNote text={error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            Upload
          </button>
          <a class="button" href={href.list(c.key)}>
            Back to the files
          </a>
        </div>
      </form>
      <div role="status">
        {results ? (
          <ul class="results">
            {results.map((r) => (
              <li key={r.name}>
                {r.name} ({r.size} bytes): {SAID[r.status] ?? r.status}
              </li>
            ))}
          </ul>
        ) : null}
      </div>
    </section>
  )
}
