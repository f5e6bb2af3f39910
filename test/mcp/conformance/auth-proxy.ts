import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback reverse proxy that adds `Authorization: Bearer <token>` to every request and forwards all else
 * byte for byte (method, path, Host, Origin, body, a streamed SSE answer). The conformance suite (0.1.16 and
 * 0.2.0-alpha) has no option to send a header, and Crew's MCP endpoint refuses a request without the
 * token; this keeps the token check on in the server under test instead of adding an unauthenticated mode
 * that could be switched on by accident. Host and Origin pass through with only the proxy's own port
 * swapped for Crew's (Crew serves its own host:port only), so the DNS-rebinding scenario's foreign
 * hosts and origins still reach Crew's own check unchanged.
 */
export interface AuthProxy {
  url: string;
  close(): Promise<void>;
}

export async function startAuthProxy(target: string, token: string): Promise<AuthProxy> {
  const upstream = new URL(target);
  let ownPort = '';
  // `127.0.0.1:<proxy port>` or `localhost:<proxy port>` (in Host, or at the end of an Origin) becomes the
  // same name at Crew's port; anything else is left as sent.
  const swapPort = (value: string | undefined): string | undefined =>
    value?.replace(
      new RegExp(`^((?:https?://)?(?:127\\.0\\.0\\.1|localhost)):${ownPort}$`),
      `$1:${upstream.port}`,
    );
  const server: Server = createServer((req: IncomingMessage, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${token}` };
    const host = swapPort(req.headers.host);
    if (host !== undefined) headers.host = host;
    const origin = swapPort(req.headers.origin);
    if (origin !== undefined) headers.origin = origin;
    const out = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        res.on('close', () => answer.destroy());
      },
    );
    out.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(out);
    res.on('close', () => out.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  ownPort = String(port);
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
