import { StdioFront } from './stdio-front.js';

/**
 * `crew mcp`: a stdio MCP server that forwards tool calls to the local daemon.
 *
 * A parent that waits only briefly for its MCP servers (Codex, Claude Code) must not start without Crew's
 * tools, so the bridge is up in two steps. First the front (`stdio-front.ts`, node builtins only) reads
 * stdin and answers `initialize` by hand, in about the time Node takes to start. Meanwhile the MCP SDK,
 * the tool schemas and the daemon connection load in the background (`bridge-server.ts`); the server
 * then reads every line the front kept, answers `tools/list` itself and forwards the rest, reaching or
 * starting the daemon as a call needs it. Nothing but protocol goes to stdout; diagnostics go to stderr.
 */
export async function runStdioBridge(options: {
  crewHome: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** `--parent NAME` / `CREW_PARENT`; default: the client's name and the project directory. */
  parent?: string;
}): Promise<void> {
  const front = new StdioFront(process.stdin, process.stdout);
  const served = import('./bridge-server.js').then(({ serveBridge }) => serveBridge(front, options));
  served.catch((error: Error) => {
    process.stderr.write(`crew mcp: ${error.message}\n`);
    front.close();
  });
  await front.closed;
  const close = await served.catch(() => undefined);
  await close?.();
}
