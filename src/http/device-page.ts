/**
 * The operator's approval page for the device flow (docs/concepts.md, Mandates). The admin token is typed into the
 * page and sent by the page's served script (/assets/device.js, src/pages/device-page.ts) in an
 * Authorization header: never in a URL, a cookie or a form post. Nothing inline runs, and the page
 * cannot be framed: the page headers (src/http/page-security.ts) say so.
 */
import type { DeviceGrant } from '../auth/identity-store.js';

export interface DevicePageInput {
  enabled: boolean;
  /** The user code as the operator typed it (already validated or null). */
  userCode: string | null;
  request: DeviceGrant | null;
}

export function devicePageHeaders(): Record<string, string> {
  return { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' };
}

export function renderDevicePage(input: DevicePageInput): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<link rel="icon" href="data:,">
<title>Approve a device request</title>
<link rel="stylesheet" href="/assets/page.css">
</head>
<body class="device-page">
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
<div id="decision" data-user-code="${escapeHtml(input.userCode)}">
<p><label>Admin token <input id="admin-token" type="password" autocomplete="off"></label></p>
<p><button id="approve" type="button">Approve</button><button id="deny" type="button">Deny</button></p>
<p id="result" role="status"></p>
</div>
<script type="module" src="/assets/device.js"></script>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
