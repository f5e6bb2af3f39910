import { describe, expect, it } from 'vitest';
import { realClock } from '../../src/clock/real-clock.js';
import type { AgentDef } from '../../src/core/agent-def.js';
import { AcpRunner } from '../../src/runners/acp-runner.js';
import type { RunnerEvent } from '../../src/runners/runner.js';

/**
 * Issue 28, also: an ACP agent that answers with one protocol line far over the bound (no newline) ends
 * its run `agent_protocol_error`, read no further than the bound, instead of growing the gateway's memory.
 */

/** Answers `initialize` with `mib` MiB of one unterminated line, then stays alive. */
const FLOODER = (mib: number) => `
process.stdin.once('data', () => {
  const block = Buffer.alloc(1024 * 1024, 0x61);
  let left = ${mib};
  const more = () => {
    while (left > 0) {
      left -= 1;
      if (!process.stdout.write(block)) return process.stdout.once('drain', more);
    }
  };
  process.stdout.write('{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"x":"');
  more();
});
setInterval(() => {}, 1000);
`;

function agent(mib: number): AgentDef {
  return {
    name: 'flooder',
    runner: 'acp',
    command: [process.execPath, '-e', FLOODER(mib)],
    shared: false,
    skills: [],
  };
}

describe('an oversized protocol line', () => {
  it('a 64 MiB line with a 1 MiB bound: the run ends failed agent_protocol_error, and the agent is gone', async () => {
    const runner = new AcpRunner({ clock: realClock, killGraceMs: 500, maxProtocolLineBytes: 1024 * 1024 });
    const before = process.memoryUsage().rss;
    const ended = await new Promise<Extract<RunnerEvent, { type: 'ended' }>>((resolve) => {
      runner.start(
        {
          runId: 'flood',
          agent: agent(64),
          prompt: 'x',
          cwd: process.cwd(),
          mcpServers: [],
          keep: false,
          shared: false,
        },
        (event) => {
          if (event.type === 'ended') resolve(event);
        },
      );
    });
    await runner.close();
    expect(ended.status).toBe('failed');
    expect(ended.errorKind).toBe('agent_protocol_error');
    expect(ended.error).toMatch(/protocol line of over \d+ bytes with no newline \(the limit is 1048576\)/);
    // Read no further than the bound (plus pipe-sized chunks): nowhere near the 64 MiB sent.
    expect(process.memoryUsage().rss - before).toBeLessThan(48 * 1024 * 1024);
  }, 30_000);
});
