import type { ClampEvent } from '../core/config-schema.js';
import { SelWriter, selPath } from '../sel/sel-writer.js';
import type { DaemonBase } from './daemon-parts.js';

/** The security event log on disk; the config values clamped to their bounds at load are its first lines. */
export function openSel(base: DaemonBase, clamped: readonly ClampEvent[]): SelWriter {
  const sel = new SelWriter({ path: selPath(base.crewHome), clock: base.clock });
  base.cleanups.add(() => sel.close());
  for (const c of clamped) {
    sel.write({
      event_type: 'config',
      source: 'gateway',
      tool_name: 'config',
      outcome: 'config_bounds_clamped',
      metadata: { key: c.key, from: c.from, to: c.to, reason: c.reason },
    });
  }
  return sel;
}
