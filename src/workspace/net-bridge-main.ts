import { spawn } from 'node:child_process';
import { connect, createServer, type Server } from 'node:net';

/**
 * Runs inside a sandbox with no network (`bwrap --unshare-net`, only loopback): listens on
 * 127.0.0.1:<port> for each `--map <port>=<unix socket>` and forwards every connection to the socket, whose
 * other end Crew holds outside and connects to the same port on the host's loopback (the provider gateway,
 * Crew's own MCP endpoint). Then it runs the agent (`-- argv…`) with its stdio, passes signals on, and
 * exits as the agent does. Nothing else is reachable: there is no route out of the namespace.
 */
const argv = process.argv.slice(2);
const split = argv.indexOf('--');
const maps = (split < 0 ? argv : argv.slice(0, split)).filter((a) => a !== '--map');
const command = split < 0 ? [] : argv.slice(split + 1);
if (command.length === 0) {
  process.stderr.write('net-bridge: usage: net-bridge --map PORT=SOCKET ... -- COMMAND ARGS...\n');
  process.exit(2);
}

const servers: Server[] = [];
async function listen(port: number, socket: string): Promise<void> {
  const server = createServer((client) => {
    const upstream = connect(socket);
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end);
    upstream.on('error', end);
  });
  servers.push(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  server.unref();
}

async function main(): Promise<void> {
  for (const map of maps) {
    const eq = map.indexOf('=');
    const port = Number(map.slice(0, eq));
    // Internal: the sandbox writes these arguments itself; this names a bug in the bridge's log.
    if (eq < 1 || !Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`bad --map ${map}`);
    await listen(port, map.slice(eq + 1));
  }
  const [file, ...args] = command as [string, ...string[]];
  const child = spawn(file, args, { stdio: 'inherit' });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.on(signal, () => child.kill(signal));
  }
  child.on('error', (error) => {
    process.stderr.write(`net-bridge: ${error.message}\n`);
    process.exit(127);
  });
  child.on('exit', (code, signal) => {
    for (const server of servers) server.close();
    process.exit(code ?? (signal ? 128 + 15 : 1));
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`net-bridge: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
