import { rmSync, writeFileSync } from 'node:fs';
import { type GatewayFile, gatewayFilePath } from './daemon-address.js';
import type { DaemonBase } from './daemon-parts.js';

/**
 * `$CREW_HOME/gateway.json` (mode 0600): where the CLI and `crew mcp` find this daemon; removed at
 * shutdown.
 */
export function writeGatewayFile(base: DaemonBase, listening: { port: number; url: string }): void {
  const file: GatewayFile = {
    pid: process.pid,
    host: base.host,
    port: listening.port,
    url: listening.url,
    started_at: new Date().toISOString(),
  };
  writeFileSync(gatewayFilePath(base.crewHome), `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  base.cleanups.add(() => rmSync(gatewayFilePath(base.crewHome), { force: true }));
}
