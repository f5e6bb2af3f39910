/**
 * The DNS-rebinding guard's comparisons, shared by the HTTP app and the dashboard socket. Host names are
 * case-insensitive (RFC 4343), so `LOCALHOST:7878` is the same host as `localhost:7878`; nothing else is
 * loosened: the port and every character of the name must match an allowed entry.
 */
export function isAllowedHost(host: string, allowed: readonly string[]): boolean {
  const wanted = host.toLowerCase();
  return wanted !== '' && allowed.some((h) => h.toLowerCase() === wanted);
}

/** An `Origin` of a page served by this daemon: `http://` and an allowed host, in any case. */
export function isAllowedOrigin(origin: string, allowed: readonly string[]): boolean {
  const wanted = origin.toLowerCase();
  return allowed.some((h) => `http://${h.toLowerCase()}` === wanted);
}
