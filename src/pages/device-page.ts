/**
 * The device approval page's script (bundled for the browser, served as /assets/device.js): sends
 * the operator's decision with the admin token typed into the page, in an Authorization header —
 * never in a URL, a cookie or a form post. The user code comes from the page's `data-user-code`.
 */
const form = document.getElementById('decision');
const result = document.getElementById('result');
const userCode = form?.dataset.userCode;

async function decide(approve: boolean): Promise<void> {
  if (!result || !userCode) return;
  const token = (document.getElementById('admin-token') as HTMLInputElement | null)?.value ?? '';
  if (!token) {
    result.textContent = 'Enter the admin token first.';
    return;
  }
  const response = await fetch(new URL('device/approve', location.href), {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ user_code: userCode, approve }),
  });
  const answer = (await response.json().catch(() => null)) as {
    status?: string;
    error?: { message?: string };
  } | null;
  result.textContent = response.ok
    ? `Request ${answer?.status}.`
    : (answer?.error?.message ?? `The request failed (HTTP ${response.status}).`);
  if (response.ok) {
    for (const id of ['approve', 'deny']) (document.getElementById(id) as HTMLButtonElement).disabled = true;
  }
}

document.getElementById('approve')?.addEventListener('click', () => void decide(true));
document.getElementById('deny')?.addEventListener('click', () => void decide(false));
