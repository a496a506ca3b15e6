/**
 * The operator's approval page for the device flow (08 §6.2). The admin token is typed into the
 * page and sent from script in an Authorization header: never in a URL, a cookie or a form post.
 * The only inline script carries a per-response nonce; nothing else may run or be framed.
 */
import type { DeviceGrant } from '../auth/identity-store.js';

export interface DevicePageInput {
  nonce: string;
  enabled: boolean;
  /** The user code as the operator typed it (already validated or null). */
  userCode: string | null;
  request: DeviceGrant | null;
}

export function devicePageHeaders(nonce: string): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
  };
}

export function renderDevicePage(input: DevicePageInput): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Approve a device request</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; }
th { text-align: left; padding-right: 1rem; vertical-align: top; }
code { font-size: 1.1em; }
button { margin-right: 0.5rem; padding: 0.4rem 1rem; }
#result { margin-top: 1rem; font-weight: bold; }
</style>
</head>
<body>
<h1>Approve a device request</h1>
${body(input)}
</body>
</html>
`;
}

function body(input: DevicePageInput): string {
  if (!input.enabled) {
    return '<p>Device approval is unavailable on this deployment: it needs an admin token (CONCLAVE_ADMIN_TOKEN), and none is configured.</p>';
  }
  const lookup = `<form method="get" action="device">
<label>User code <input name="user_code" autocomplete="off" placeholder="XXXX-XXXX" value="${escapeHtml(input.userCode ?? '')}"></label>
<button type="submit">Look up</button>
</form>`;
  if (input.userCode === null) return `<p>Enter the user code the agent showed you.</p>\n${lookup}`;
  if (input.request === null) {
    return `<p>No pending request has the user code <code>${escapeHtml(input.userCode)}</code>: it is unknown, already decided, or expired.</p>\n${lookup}`;
  }
  const request = input.request;
  const rows: [string, string | null][] = [
    ['User code', input.userCode],
    ['Client', request.clientId],
    ['From', request.from],
    ['Agent slug', request.agentSlug],
    ['Scopes', request.actions.map((action) => `svc:${action}`).join(' ')],
    ['Expires', new Date(request.expiresAt).toISOString()],
  ];
  return `<p>An agent asks for a hosted identity. Approve only if you expected this request.</p>
<table>
${rows.map(([name, value]) => `<tr><th>${name}</th><td>${value === null ? '<em>not given</em>' : escapeHtml(value)}</td></tr>`).join('\n')}
</table>
<p><label>Admin token <input id="admin-token" type="password" autocomplete="off"></label></p>
<p><button id="approve" type="button">Approve</button><button id="deny" type="button">Deny</button></p>
<p id="result" role="status"></p>
<script nonce="${input.nonce}">
(() => {
  const userCode = ${scriptString(input.userCode)};
  const result = document.getElementById('result');
  async function decide(approve) {
    const token = document.getElementById('admin-token').value;
    if (!token) { result.textContent = 'Enter the admin token first.'; return; }
    const response = await fetch(new URL('device/approve', location.href), {
      method: 'POST',
      headers: { authorization: 'Bearer ' + token, 'content-type': 'application/json' },
      body: JSON.stringify({ user_code: userCode, approve }),
    });
    const answer = await response.json().catch(() => null);
    result.textContent = response.ok
      ? 'Request ' + answer.status + '.'
      : (answer && answer.error && answer.error.message) || 'The request failed (HTTP ' + response.status + ').';
    if (response.ok) for (const id of ['approve', 'deny']) document.getElementById(id).disabled = true;
  }
  document.getElementById('approve').addEventListener('click', () => decide(true));
  document.getElementById('deny').addEventListener('click', () => decide(false));
})();
</script>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A JSON string literal that cannot close the script element. */
function scriptString(text: string): string {
  return JSON.stringify(text).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
}
