import { afterEach, describe, expect, it } from 'vitest';
import { isAllowedHost, isAllowedOrigin } from '../../src/http/allowed-host.js';
import { type AppHarness, appHarness } from './app-harness.js';

describe('Host and Origin checks ignore case (host names are case-insensitive, RFC 4343)', () => {
  let h: AppHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('answers LOCALHOST-style spellings of an allowed host, and still refuses another host', async () => {
    h = appHarness();
    const upper = await h.req('GET', '/api/runs', { headers: { host: 'CREW.TEST:7878' } });
    expect(upper.status, JSON.stringify(upper.body)).toBe(200);
    const mixedOrigin = await h.req('GET', '/api/runs', {
      headers: { host: 'Crew.Test:7878', origin: 'HTTP://CREW.test:7878' },
    });
    expect(mixedOrigin.status).toBe(200);
    const other = await h.req('GET', '/api/runs', { headers: { host: 'evil.test:7878' } });
    expect(other.status).toBe(403);
    const otherPort = await h.req('GET', '/api/runs', { headers: { host: 'CREW.TEST:7879' } });
    expect(otherPort.status).toBe(403);
  });

  it('the shared predicates used by HTTP and the dashboard socket', () => {
    const allowed = ['127.0.0.1:7878', 'localhost:7878'];
    expect(isAllowedHost('LOCALHOST:7878', allowed)).toBe(true);
    expect(isAllowedHost('LocalHost:7878', allowed)).toBe(true);
    expect(isAllowedHost('localhost.evil:7878', allowed)).toBe(false);
    expect(isAllowedHost('', allowed)).toBe(false);
    expect(isAllowedOrigin('http://LOCALHOST:7878', allowed)).toBe(true);
    expect(isAllowedOrigin('https://localhost:7878', allowed)).toBe(false);
    expect(isAllowedOrigin('http://localhost:7878.evil', allowed)).toBe(false);
  });
});
