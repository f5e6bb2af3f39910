/**
 * What Crew's MCP server says of itself in `initialize`, shared by the HTTP endpoint and the stdio
 * bridge (`crew mcp`), which answers `initialize` on its own before the daemon is reached. Imports
 * nothing, so the bridge pays nothing for it at start.
 */
export const SERVER_INFO = { name: 'crew', version: '0.1.0' } as const;

export const SERVER_INSTRUCTIONS =
  'Crew runs sub-agents for you. Pass every task of a fan-out in one spawn_run call (tasks=[...]); beyond the cap they queue and drain by themselves. Then call spawn_wait until each run has reported. Refusals are typed (refusal.code) and say what to do next.';

/** Both servers advertise the same capabilities. */
export const SERVER_CAPABILITIES = { tools: {}, logging: {} };
