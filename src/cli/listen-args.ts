import { isIP } from 'node:net';

/**
 * `crew serve --host/--port`, checked before the daemon touches `$CREW_HOME` (its database, token and lock):
 * a typo is a usage error with the value quoted, never a half-started daemon.
 */

/** A TCP port 0..65535 (0 = any free port), as digits only: `1.5`, `-1`, `0x50` and `80abc` are refused. */
export function parsePortArg(value: string): number | string {
  const port = /^\d{1,5}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(port) || port > 65_535)
    return `--port: expected a port number 0..65535, got "${value}"`;
  return port;
}

/** An IPv4 or IPv6 address, or a DNS host name (RFC 1123 labels). */
export function checkHostArg(value: string): string | undefined {
  if (isIP(value) !== 0) return undefined;
  const label = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
  if (value.length > 0 && value.length <= 253 && value.split('.').every((l) => label.test(l)))
    return undefined;
  return `--host: expected an IP address or a host name, got "${value}"`;
}

/** Loopback addresses and names: a daemon bound to one of these is reachable from this host only. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

/**
 * What `crew serve` says on stderr when it binds anything but loopback: every route still needs a token,
 * but the port is now open to the network, so the token is the only thing between it and the daemon.
 */
export function exposedBindWarning(host: string): string | undefined {
  if (isLoopbackHost(host)) return undefined;
  return `crew: warning: listening on ${host}, so the gateway is reachable from the network; every request still needs the bearer token in $CREW_HOME/token, which is then the only protection (keep it secret, or use the default --host 127.0.0.1)`;
}
