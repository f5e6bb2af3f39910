import { isConfigKey, parseKeyValue, shownValue } from '../core/config-schema.js';
import { CrewError, refuse } from '../core/errors.js';
import type { App } from './app-env.js';
import { readJson } from './edge-replies.js';

/**
 * `PUT /api/config` `{key, value}` (`crew config set`): the operator only; the value is checked against
 * the config schema and persisted with `setConfig`, applied at the daemon's next start.
 */
export function mountConfigRoutes(app: App, setConfig: (key: string, value: unknown) => void): void {
  app.put('/api/config', async (c) => {
    if (c.get('principal').kind !== 'operator')
      throw new CrewError(refuse('unauthorized', 'only the operator may change configuration'));
    const body = await readJson(c.req);
    const key = String(body.key ?? '');
    if (key === 'agent.max_subagents' && (body.value === 1 || body.value === 2)) {
      throw new CrewError(
        refuse(
          'invalid_argument',
          'agent.max_subagents must be 0 (auto) or at least 3; 1 and 2 are refused here',
          {
            path: 'value',
            limit: 3,
            current: body.value as number,
          },
        ),
      );
    }
    if (!key.startsWith('agents.') && !isConfigKey(key)) {
      throw new CrewError(refuse('invalid_argument', `unknown configuration key ${key}`, { path: 'key' }));
    }
    const checked = parseKeyValue(key, body.value);
    if (!checked.ok) {
      throw new CrewError(
        refuse(
          'invalid_argument',
          checked.problems.map((p) => `${p.key}: expected ${p.expected}, got ${p.got}`).join('; '),
          {
            path: 'value',
          },
        ),
      );
    }
    setConfig(key, checked.value);
    return c.json({
      ok: true,
      key,
      value: shownValue(key, checked.value),
      applies: 'at the next start of the daemon',
    });
  });
}
