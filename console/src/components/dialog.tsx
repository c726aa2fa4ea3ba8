import type { ComponentChildren } from 'preact'
import { useEffect, useId, useRef, useState } from 'preact/hooks'

/**
 * A modal <dialog>: the browser keeps focus inside it and closes it on Escape; `onClose` runs
 * however it closes, so whatever it showed can be forgotten.
 */
export function Dialog(props: { title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null)
  const titleId = useId()
  const shown = useRef(true)
  useEffect(() => {
    const dialog = ref.current!
    dialog.showModal()
    return () => {
      // The close event of a dialog that another replaced must not close its successor.
      shown.current = false
      if (dialog.open) dialog.close()
    }
  }, [])
  return (
    <dialog ref={ref} aria-labelledby={titleId} onClose={() => shown.current && props.onClose()}>
      <h2 id={titleId}>{props.title}</h2>
      {props.children}
    </dialog>
  )
}

/** Asks before an action that cannot be undone. */
export function Confirm(props: {
  title: string
  action: string
  children: ComponentChildren
  onConfirm: () => Promise<void>
  onClose: () => void
}) {
  const [failure, setFailure] = useState<string>()
  const [busy, setBusy] = useState(false)
  const confirm = async () => {
    setBusy(true)
    try {
      await props.onConfirm()
    } catch (error) {
      setFailure(error instanceof Error ? error.message : String(error))
      setBusy(false)
    }
  }
  return (
    <Dialog title={props.title} onClose={props.onClose}>
      {props.children}
      {failure && (
        <p role="alert" class="error">
          {failure}
        </p>
      )}
      <div class="actions">
        <button type="button" onClick={props.onClose}>
          Cancel
        </button>
        <button
          type="button"
          class="danger"
          disabled={busy}
          onClick={() => {
            void confirm()
          }}
        >
          {props.action}
        </button>
      </div>
    </Dialog>
  )
}

/** A secret shown this once: closing the dialog drops it, and nothing else keeps it. */
export function SecretDialog(props: { title: string; secret: string; onClose: () => void }) {
  const [copied, setCopied] = useState<string>()
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.secret)
      setCopied('Copied to the clipboard.')
    } catch {
      setCopied('The browser refused the clipboard: select the secret and copy it.')
    }
  }
  return (
    <Dialog title={props.title} onClose={props.onClose}>
      <p>This secret is shown only now. Store it before closing this dialog.</p>
      <label>
        Secret
        <input type="text" readOnly value={props.secret} class="secret" spellcheck={false} autocomplete="off" />
      </label>
      <p role="status">{copied}</p>
      <div class="actions">
        <button
          type="button"
          onClick={() => {
            void copy()
          }}
        >
          Copy
        </button>
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </div>
    </Dialog>
  )
}

/** The message of a failed action, for a form to show. */
/** The end of a dialog's form: why the last submit failed, if it did, then Cancel and the submit button. */
export function FormActions(props: { failure: string | undefined; submit: string; onClose: () => void }) {
  return (
    <>
      {props.failure && (
        <p role="alert" class="error">
          {props.failure}
        </p>
      )}
      <div class="actions">
        <button type="button" onClick={props.onClose}>
          Cancel
        </button>
        <button type="submit">{props.submit}</button>
      </div>
    </>
  )
}

export const failureMessage = (error: unknown) => (error instanceof Error ? error.message : String(error))
