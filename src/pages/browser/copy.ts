/**
 * Copy buttons: a `<button data-copy="<input id>">` copies that input's value, and says so in the
 * element right after it (a status), or asks the reader to copy by hand when the clipboard refuses.
 */
export function wireCopyButtons(root: HTMLElement): void {
  root.addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-copy]');
    const input = button && document.getElementById(button.dataset.copy ?? '');
    if (!button || !(input instanceof HTMLInputElement)) return;
    const status = button.nextElementSibling;
    input.select();
    navigator.clipboard
      ?.writeText(input.value)
      .then(() => {
        if (status) status.textContent = 'Copied.';
      })
      .catch(() => {
        if (status) status.textContent = 'Select the link and copy it.';
      });
  });
}
