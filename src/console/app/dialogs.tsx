/**
 * Modal dialogs on the native <dialog> (focus kept inside, Escape cancels): a confirmation and a
 * secret shown once with a copy button. `confirm()` and `showSecret()` open them from anywhere; the
 * <Dialogs/> host in the shell renders the open one.
 */
import { useEffect, useRef, useState } from 'preact/hooks'
import type { ComponentChildren } from 'preact'

type Open =
  | { kind: 'confirm'; title: string; message: string; action: string; resolve: (yes: boolean) => void }
  | { kind: 'secret'; title: string; label: string; secret: string; resolve: () => void }

let show: (d: Open | null) => void = () => {}
/** Each dialog opened is a new element, so a second confirmation never reuses the first's handlers. */
let opened = 0

export function confirm(title: string, message: string, action: string): Promise<boolean> {
  return new Promise((resolve) => show({ kind: 'confirm', title, message, action, resolve }))
}

export function showSecret(title: string, label: string, secret: string): Promise<void> {
  return new Promise((resolve) => show({ kind: 'secret', title, label, secret, resolve }))
}

function Modal(props: { title: string; onCancel: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null)
  useEffect(() => {
    const dialog = ref.current!
    if (!dialog.open) dialog.showModal()
    const cancel = (e: Event) => {
      e.preventDefault()
      props.onCancel()
    }
    dialog.addEventListener('cancel', cancel)
    return () => dialog.removeEventListener('cancel', cancel)
  }, [])
  return (
    <dialog ref={ref} aria-labelledby="dialog-title">
      <h2 id="dialog-title">{props.title}</h2>
      {props.children}
    </dialog>
  )
}

async function copy(text: string, field: HTMLInputElement | null): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text)
    return true
  } catch {
    // no clipboard permission: select the text and copy it the old way
    field?.select()
    return document.execCommand('copy')
  }
}

function Secret(props: { open: Extract<Open, { kind: 'secret' }>; close: () => void }) {
  const field = useRef<HTMLInputElement>(null)
  const [copied, setCopied] = useState('')
  return (
    <Modal title={props.open.title} onCancel={props.close}>
      <p class="warning">
        <strong>You will not see this again.</strong> Copy it now and keep it somewhere safe.
      </p>
      <label for="secret-value">{props.open.label}</label>
      <div class="row">
        <input id="secret-value" ref={field} readOnly value={props.open.secret} class="secret" />
        <button
          type="button"
          onClick={async () =>
            setCopied((await copy(props.open.secret, field.current)) ? 'Copied.' : 'Select it and copy it by hand.')
          }
        >
          Copy
        </button>
      </div>
      <p role="status">{copied}</p>
      <div class="actions">
        <button type="button" class="primary" onClick={props.close}>
          Done
        </button>
      </div>
    </Modal>
  )
}

export function Dialogs() {
  const [open, setOpen] = useState<Open | null>(null)
  useEffect(() => {
    show = (d) => {
      opened++
      setOpen(d)
    }
    return () => {
      show = () => {}
    }
  }, [])
  if (!open) return null
  if (open.kind === 'secret')
    return (
      <Secret
        key={opened}
        open={open}
        close={() => {
          setOpen(null)
          open.resolve()
        }}
      />
    )
  const answer = (yes: boolean) => {
    setOpen(null)
    open.resolve(yes)
  }
  return (
    <Modal key={opened} title={open.title} onCancel={() => answer(false)}>
      <p>{open.message}</p>
      <div class="actions">
        {/* biome-ignore lint/a11y/noAutofocus: a confirmation of what cannot be undone opens on its safe answer */}
        <button type="button" onClick={() => answer(false)} autoFocus>
          Cancel
        </button>
        <button type="button" class="danger" onClick={() => answer(true)}>
          {open.action}
        </button>
      </div>
    </Modal>
  )
}
