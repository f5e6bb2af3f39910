import { describe } from 'vitest';
import { realAgentCases } from './real-agent-cases.js';

describe('opencode over ACP through Crew (real CLI, scripted provider)', () => {
  // One run at a time: opencode processes on one HOME share its data directory (see realAgentCases).
  realAgentCases('opencode', { oneAtATime: true });
});
