import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { crewCommand, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';
import { call } from './mcp-http-client.js';

describe('crew mcp across a daemon restart', () => {
  let d: DaemonProcess | undefined;
  afterAll(async () => {
    if (d) {
      expect(await d.stop()).toBe(0);
      d.cleanup();
    }
  });

  it('asks the new daemon session for the parent’s logging level again, so completion events still arrive', async () => {
    const first = await startDaemonProcess();
    d = first;
    // No CREW_URL: the bridge finds the daemon by gateway.json, as it finds a restarted one.
    const [node, args] = crewCommand(['mcp']);
    const client = new Client({ name: 'reconnect-test', version: '1' });
    const logged: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logged.push(JSON.stringify(n.params.data));
    });
    await client.connect(
      new StdioClientTransport({
        command: node,
        args,
        env: { ...(process.env as Record<string, string>), CREW_HOME: first.home },
        stderr: 'pipe',
      }),
    );
    try {
      await client.setLoggingLevel('info');
      const before = await call(client, 'spawn_run', { task: '#sim sleep=20ms before the restart' });
      const beforeId = (before.runs as { id: string }[])[0]!.id;
      await pollFor(
        'the first completion event as a notification',
        () => (logged.some((l) => l.includes(beforeId)) ? true : undefined),
        30_000,
      );

      expect(await first.stop()).toBe(0);
      d = await startDaemonProcess({ home: first.home });
      // The bridge's session died with the old daemon: this call reconnects, then spawns.
      const after = await call(client, 'spawn_run', { task: '#sim sleep=20ms after the restart' });
      const afterId = (after.runs as { id: string }[])[0]!.id;
      await pollFor(
        'the completion event after the restart as a notification',
        () => (logged.some((l) => l.includes(afterId)) ? true : undefined),
        30_000,
      );
    } finally {
      await client.close();
    }
  }, 90_000);
});
