import { describe } from 'vitest';
import { realAgentCases } from './real-agent-cases.js';

/**
 * claude-agent-acp 0.101 (Claude Code 2.1.332 through @anthropic-ai/claude-agent-sdk's native binary)
 * against the scripted provider, through a real `crew serve`. Both packages declare Node >= 22; they
 * complete turns on Node 20 all the same. As root it needs IS_SANDBOX=1, and tool calls reach
 * session/request_permission only with permissions.defaultMode "default" (see the rig).
 */
describe('claude-agent-acp through Crew (real CLI, scripted provider)', () => {
  realAgentCases('claude');
});
