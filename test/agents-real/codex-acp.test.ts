import { describe } from 'vitest';
import { realAgentCases } from './real-agent-cases.js';

/**
 * codex-acp 0.16 (Codex 0.171) against the scripted provider over the Responses API, through a real
 * `crew serve`. Its 429 comes back as JSON-RPC data `codex_error_info.…http_status_code`.
 */
describe('codex-acp through Crew (real CLI, scripted provider)', () => {
  realAgentCases('codex', { outlivesCrash: true });
});
