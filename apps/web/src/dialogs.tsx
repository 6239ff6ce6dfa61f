import { type ComponentChildren, render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/** A form's row of actions: its submit button (labelled by the children) and Cancel. */
export function SubmitOrCancel(props: {
  children: ComponentChildren;
  onCancel: () => void;
  disabled?: boolean;
  danger?: boolean;
}) {
  return (
    <div class="row">
      <button type="submit" class={props.danger ? 'primary danger' : 'primary'} disabled={props.disabled}>
        {props.children}
      </button>
      <button type="button" onClick={props.onCancel}>
        Cancel
      </button>
    </div>
  );
}

interface AskOptions {
  title: string;
  label?: string;
  initial?: string;
  confirmLabel?: string;
  danger?: boolean;
}

/** A modal dialog (native <dialog>: focus kept inside, Escape cancels). Text, or null when cancelled; confirm-only dialogs answer ''. */
function Dialog(props: AskOptions & { done: (value: string | null) => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const [value, setValue] = useState(props.initial ?? '');
  useEffect(() => {
    ref.current?.showModal();
  }, []);
  const close = (result: string | null) => {
    ref.current?.close();
    props.done(result);
  };
  return (
    <dialog ref={ref} aria-labelledby="dialog-title" onCancel={() => close(null)}>
      <form
        method="dialog"
        class="stack"
        onSubmit={(e) => {
          e.preventDefault();
          close(props.label ? value.trim() || null : '');
        }}
      >
        <h2 id="dialog-title">{props.title}</h2>
        {props.label && (
          <>
            <label for="dialog-input">{props.label}</label>
            <input id="dialog-input" value={value} onInput={(e) => setValue(e.currentTarget.value)} autoFocus />
          </>
        )}
        <SubmitOrCancel danger={props.danger} onCancel={() => close(null)}>
          {props.confirmLabel ?? 'OK'}
        </SubmitOrCancel>
      </form>
    </dialog>
  );
}

function open(options: AskOptions): Promise<string | null> {
  const host = document.createElement('div');
  document.body.append(host);
  const previous = document.activeElement as HTMLElement | null;
  return new Promise((resolve) => {
    render(
      <Dialog
        {...options}
        done={(value) => {
          render(null, host);
          host.remove();
          previous?.focus();
          resolve(value);
        }}
      />,
      host,
    );
  });
}

export const ask = (title: string, label: string, initial = '', confirmLabel = 'OK') =>
  open({ title, label, initial, confirmLabel });

export const confirmAction = async (title: string, confirmLabel = 'Delete'): Promise<boolean> =>
  (await open({ title, confirmLabel, danger: true })) !== null;
