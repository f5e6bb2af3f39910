/**
 * The processes of bench/provider's overhead part, each on its own event loop as in use (the agent, the
 * daemon and the provider are three processes): `upstream BYTES` serves an SSE body of about BYTES;
 * `proxy UPSTREAM_URL` serves Crew's pass-through to it. Each prints its port on stdout.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { realClock } from '../../src/clock/real-clock.js';
import { ProviderMetrics } from '../../src/provider/provider-metrics.js';
import { createProviderProxy } from '../../src/provider/provider-proxy.js';

const [mode, arg] = process.argv.slice(2);
const server =
  mode === 'upstream'
    ? (() => {
        const event = `data: ${JSON.stringify({ type: 'content_block_delta', delta: { text: 'x'.repeat(1000) } })}\n\n`;
        const body = Buffer.from(event.repeat(Math.ceil(Number(arg) / event.length)));
        return createServer((req, res) => {
          req.resume();
          res.writeHead(200, { 'content-type': 'text/event-stream', 'x-body-bytes': String(body.length) });
          res.end(body);
        });
      })()
    : createServer(
        createProviderProxy({
          upstreams: { openai: String(arg) },
          resolveRun: () => 'bench',
          metrics: new ProviderMetrics(),
          clock: realClock,
        }),
      );
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
