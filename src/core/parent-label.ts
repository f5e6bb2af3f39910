import { cleanClientName } from './client-name.js';
import type { ParentKey } from './types.js';

/** What a parent is, for the reader: an agent, a person, or a run (nesting). */
export type ParentKind = 'agent' | 'person' | 'run' | 'other';

export interface ParentLabel {
  kind: ParentKind;
  /** What a person reads: "claude-code (session bc5b9186)", "Slack U123", "CLI". */
  label: string;
  /** The raw parent key, kept for whoever needs it (a tooltip, a script). */
  title: string;
}

const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A parent key as a person reads it, the same words on every surface. The dashboard's page has its own
 * copy in plain JavaScript (src/dashboard/assets/view.js, served as it is); a test holds the two equal.
 *
 * - `mcp:<session uuid>` (a session that is its own parent): "claude-code (session bc5b9186)" when its
 *   client named itself (`name`, cleaned with {@link cleanClientName}), else "MCP session bc5b9186";
 * - `mcp:<name>` (`crew mcp`'s parent or `X-Crew-Parent`): the name itself; `mcp:stateless`: "MCP (stateless)";
 * - `slack:<user>`, `chat:<id>`: "Slack U123", "chat c1";
 * - `cli:log` / `cli:operator`: "CLI"; `cli:dashboard`: "dashboard re-run"; `crew spawn --wait`'s
 *   `cli:<uuid>`: "CLI --wait (0f1e2d3c)";
 * - `run:<id>`: "run <id>";
 * - `cluster:<gateway>` (a run executed here for another gateway): "claude-code (via gateway gw-a)" when
 *   its parent's client name came with it, else "gateway gw-a".
 *
 * `name` is worn only by the two kinds whose key is no name (a session, a cluster copy).
 */
export function parentLabel(key: ParentKey, name?: unknown): ParentLabel {
  const colon = key.indexOf(':');
  const kind = colon < 0 ? '' : key.slice(0, colon);
  const rest = colon < 0 ? key : key.slice(colon + 1);
  const title = key;
  switch (kind) {
    case 'mcp': {
      if (SESSION_ID.test(rest)) {
        const named = cleanClientName(name);
        const short = rest.slice(0, 8);
        return {
          kind: 'agent',
          label: named ? `${named} (session ${short})` : `MCP session ${short}`,
          title,
        };
      }
      return { kind: 'agent', label: rest === 'stateless' ? 'MCP (stateless)' : rest, title };
    }
    case 'slack':
      return { kind: 'person', label: `Slack ${rest}`, title };
    case 'chat':
      return { kind: 'person', label: `chat ${rest}`, title };
    case 'cli':
      return { kind: 'person', label: cliLabel(rest), title };
    case 'run':
      return { kind: 'run', label: `run ${rest}`, title };
    case 'cluster': {
      const named = cleanClientName(name);
      return { kind: 'agent', label: named ? `${named} (via gateway ${rest})` : `gateway ${rest}`, title };
    }
    default:
      return { kind: 'other', label: key === '' ? '(none)' : key, title };
  }
}

/**
 * Whether a parent's key is no name of its own, so a client name may stand for it: an MCP session that
 * is its own parent (`mcp:<uuid>`) or a run executed for another gateway (`cluster:<gateway>`).
 */
export function isNamedByClient(key: ParentKey): boolean {
  if (key.startsWith('cluster:')) return true;
  return key.startsWith('mcp:') && SESSION_ID.test(key.slice(4));
}

function cliLabel(rest: string): string {
  if (rest === 'log' || rest === 'operator') return 'CLI';
  if (rest === 'dashboard') return 'dashboard re-run';
  if (SESSION_ID.test(rest)) return `CLI --wait (${rest.slice(0, 8)})`;
  return `CLI (${rest})`;
}
