/**
 * The pages' calls to the API on this origin: JSON in, JSON out, the seat's token in the
 * Authorization header only. A refusal carries the envelope's code, message and field; the pages
 * word it for people (browser/form-errors.ts).
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The input field a refusal names (`error.details.field`), when it names one. */
    readonly field?: string,
  ) {
    super(message);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: responses are read field by field, as served
export type Json = Record<string, any>;

export async function api(method: string, path: string, body?: unknown, token?: string): Promise<Json> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(path, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    referrerPolicy: 'no-referrer',
    credentials: 'omit',
  });
  const text = await response.text();
  let json: Json = {};
  try {
    json = text ? (JSON.parse(text) as Json) : {};
  } catch {
    json = {};
  }
  if (!response.ok) {
    const error = (json.error ?? {}) as Json;
    const field = typeof error.details?.field === 'string' ? error.details.field : undefined;
    throw new ApiError(
      response.status,
      String(error.code ?? 'error'),
      String(error.message ?? response.statusText),
      field,
    );
  }
  return json;
}
