import { describe } from 'vitest';
import { realAgentCases } from './real-agent-cases.js';

describe('gemini over ACP through Crew (real CLI, scripted provider)', () => {
  realAgentCases('gemini');
});
