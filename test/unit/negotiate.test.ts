/**
 * Which callers get HTML (src/http/negotiate.ts): a browser's navigation does; API clients — no
 * Accept header, `*\/*`, JSON, or JSON ranked above HTML — keep the JSON envelope.
 */
import { describe, expect, it } from 'vitest';
import { prefersHtml } from '../../src/http/negotiate.js';

describe('prefersHtml', () => {
  it('chooses HTML for browser navigations', () => {
    expect(prefersHtml('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')).toBe(true);
    expect(prefersHtml('text/html')).toBe(true);
    expect(prefersHtml('application/json;q=0.5, text/html')).toBe(true);
  });

  it('keeps JSON for API clients', () => {
    for (const accept of [
      undefined,
      '',
      '*/*',
      'application/json',
      'application/json, text/plain, */*',
      'text/event-stream',
      'text/html;q=0.5, application/json',
      'text/html;q=0, */*',
      'application/json, text/html',
    ]) {
      expect(prefersHtml(accept), String(accept)).toBe(false);
    }
  });
});
