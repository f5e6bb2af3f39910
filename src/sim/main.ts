#!/usr/bin/env node
import { Readable, Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import * as acp from '@agentclientprotocol/sdk';
import { stopAllGrandchildren } from './grandchild.js';
import { runOnce } from './once.js';
import { createSimAgent } from './sim-agent.js';

/**
 * `crew-sim-agent`: an ACP agent over stdio with no LLM (the default), or `--once "<task>"` for one turn
 * on stdout. Nothing but protocol goes to stdout in ACP mode; diagnostics go to stderr.
 */

const USAGE = `usage: crew-sim-agent [--model M] [--effort E] [--config-options] [--no-close]
                      [--auth-required] [--protocol N] [--sessions DIR]
       crew-sim-agent --once "<task>" [--model M] [--effort E]
Prompt directives: a line "#sim sleep=800ms chunks=20 bytes=4096 mem=200mb cpu=0.5
fail=crash|error|refusal hang exit=3 echo child=sleep tools=5 ask info", or "#sim" within
a line, followed by known directives (the first other word ends them).
As a parent (over ACP, calling the "crew" MCP server from session/new):
#sim spawn="task" spawn="task" [wave] wait|yield
`;

function main(): void {
  let args: ReturnType<typeof parse>;
  try {
    args = parse();
  } catch (error) {
    process.stderr.write(`crew-sim-agent: ${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  if (args.help) {
    process.stdout.write(USAGE);
    return;
  }
  // Grandchildren die with the agent, however it ends (a default SIGTERM would skip `exit` handlers).
  process.on('exit', stopAllGrandchildren);
  const cancel = new AbortController();
  for (const [signal, code] of [
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const) {
    process.on(signal, () => {
      if (args.once === undefined) process.exit(code);
      cancel.abort();
    });
  }

  const model = args.model;
  const effort = args.effort;
  if (args.once !== undefined) {
    runOnce(args.once, { signal: cancel.signal, ...(model && { model }), ...(effort && { effort }) }).then(
      (code) => process.exit(code),
      (error: unknown) => {
        process.stderr.write(`crew-sim-agent: ${String(error)}\n`);
        process.exit(1);
      },
    );
    return;
  }

  // A client that went away leaves nobody to talk to.
  process.stdout.on('error', () => process.exit(0));
  const agent = createSimAgent({
    ...(model && { model }),
    ...(effort && { effort }),
    configOptions: args['config-options'] === true,
    close: args['no-close'] !== true,
    authRequired: args['auth-required'] === true,
    ...(args.protocol !== undefined && { protocolVersion: Number(args.protocol) }),
    ...(args.sessions !== undefined && { sessionsDir: args.sessions }),
    terminate(code) {
      process.stderr.write(`sim: exiting with code ${code}\n`);
      process.exit(code);
    },
  });
  const stream = acp.ndJsonStream(
    Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
  );
  const connection = agent.connect(stream);
  void connection.closed.then(() => process.exit(0));
}

function parse() {
  return parseArgs({
    options: {
      once: { type: 'string' },
      model: { type: 'string' },
      effort: { type: 'string' },
      'config-options': { type: 'boolean' },
      'no-close': { type: 'boolean' },
      'auth-required': { type: 'boolean' },
      protocol: { type: 'string' },
      sessions: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: false,
    strict: true,
  }).values;
}

main();
