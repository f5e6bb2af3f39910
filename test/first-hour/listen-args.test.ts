import { describe, expect, it } from 'vitest';
import { checkHostArg, exposedBindWarning, isLoopbackHost, parsePortArg } from '../../src/cli/listen-args.js';

describe('crew serve --host / --port', () => {
  it('takes ports 0..65535 written as digits', () => {
    expect(parsePortArg('0')).toBe(0);
    expect(parsePortArg('7878')).toBe(7878);
    expect(parsePortArg('65535')).toBe(65535);
    for (const bad of ['65536', 'abc', '', ' 80', '0x50', '1e3', '80abc', '-0'])
      expect(parsePortArg(bad), bad).toMatch(/^--port: expected a port number/);
  });

  it('takes IP addresses and host names, and refuses anything else', () => {
    for (const ok of ['127.0.0.1', '0.0.0.0', '::', '::1', 'localhost', 'crew-host.example.lan'])
      expect(checkHostArg(ok), ok).toBeUndefined();
    for (const bad of ['', 'a b', 'host:80', 'http://x', '-lead', 'x'.repeat(64), '../etc'])
      expect(checkHostArg(bad), bad).toMatch(/^--host: expected an IP address or a host name/);
  });

  it('warns on any bind that is not loopback, naming the token as the only protection', () => {
    for (const loop of ['127.0.0.1', '127.1.2.3', 'localhost', 'LOCALHOST', '::1', '[::1]'])
      expect(exposedBindWarning(loop), loop).toBeUndefined();
    for (const open of ['0.0.0.0', '::', '192.168.1.4', 'crew-host.example.lan']) {
      expect(isLoopbackHost(open)).toBe(false);
      expect(exposedBindWarning(open)).toMatch(/reachable from the network.*token/);
    }
  });
});
