import { afterEach, describe, expect, it } from 'vitest';
import { decodePercentSafely } from '../../src/core/percent-decode.js';
import { type AppHarness, appHarness, selSince } from '../http/app-harness.js';

/**
 * The SEL keeps no percent-encoded secret (issue 28): an unknown route's path is written to the log,
 * and a token percent-encoded in it (wholly, or one character, or twice) is masked like a plain one.
 * Malformed escapes do not throw: the refusal is still answered and written.
 */

const GITHUB = 'ghp_16C7e42F292c6912E7710c838347Ae178B4a';
const AWS_ID = 'AKIAIOSFODNN7EXAMPLE';
const AWS_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';

/** Every byte of `text` as `%XX`. */
const encodeAll = (text: string) =>
  [...Buffer.from(text, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');

let h: AppHarness;
afterEach(async () => {
  await h?.close();
});

describe('percent-encoded secrets in refused paths', () => {
  it('an unknown route whose path holds an encoded token is logged with the token masked', async () => {
    h = appHarness();
    const paths = [
      `/api/x/${encodeAll(GITHUB)}`,
      `/api/x/ghp%5F${GITHUB.slice(4)}`,
      `/api/x/${encodeURIComponent(encodeAll(GITHUB))}`,
      `/api/x/${encodeAll(AWS_ID)}`,
      `/api/x/aws_secret_access_key%3D${encodeURIComponent(AWS_SECRET)}`,
      `/api/x/${encodeAll(`aws ${AWS_SECRET}`)}`,
    ];
    for (const path of paths) {
      for (const token of [undefined, null]) {
        const from = h.world.sel.records.length;
        const reply = await h.req('GET', path, token === null ? { token: null } : {});
        expect([401, 404]).toContain(reply.status);
        const lines = selSince(h.world, from);
        expect(lines.length, path).toBeGreaterThan(0);
        const text = JSON.stringify(lines);
        for (const secret of [GITHUB, AWS_ID, AWS_SECRET]) {
          expect(text, path).not.toContain(secret);
          expect(text, path).not.toContain(secret.slice(4, 24));
          expect(text, path).not.toContain(encodeAll(secret).slice(12, 60));
        }
        expect(text, path).toContain('[REDACTED');
      }
    }
  });

  it('malformed escapes do not throw: the refusal is answered and written', async () => {
    h = appHarness();
    for (const path of ['/api/x/%', '/api/x/%E0%A4%A', '/api/x/%ZZ%', '/api/x/%C0%AF', '/api/x/%ED%A0%80']) {
      const from = h.world.sel.records.length;
      const reply = await h.req('GET', path);
      expect(reply.status, path).toBe(404);
      expect(reply.body.refusal?.code).toBe('not_found');
      expect(selSince(h.world, from), path).toHaveLength(1);
    }
  });

  it('decodePercentSafely decodes valid runs, keeps malformed ones, and undoes double encoding', () => {
    expect(decodePercentSafely('a%2Fb%20c')).toBe('a/b c');
    expect(decodePercentSafely('%2567hp')).toBe('ghp');
    expect(decodePercentSafely('%E2%82%AC and %E2%82')).toBe('€ and %E2%82');
    for (const malformed of ['%', '%Z', '%ZZ%', '%C0%AF', '%ED%A0%80', '100%', '%%41'])
      expect(() => decodePercentSafely(malformed)).not.toThrow();
    expect(decodePercentSafely('%%41')).toBe('%A');
  });
});
