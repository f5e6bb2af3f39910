import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { REFUSAL_CODES } from '../../src/core/errors.js';
import { type FakeProvider, startFakeProvider } from '../../src/fake-provider/fake-provider.js';
import { api, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';
import { bundledCommand } from '../helpers/test-bundle.js';
import { FakeSlack, TEST_SIGNING_SECRET } from '../slack/fake-slack.js';
import { rssOf, sendChunked } from './chunked-send.js';
import { daemonRoutes, methodsOf, pathWith } from './daemon-routes.js';

/**
 * Every route of a real `crew serve` (listed from the app as the daemon composes it), and the provider
 * gateway's `/p/<token>/<provider>/…`, and the dashboard's WebSocket, fuzzed with hostile path segments
 * and query values and with chunked bodies far over the limit, for each kind of token: none, the
 * operator's, a live run's, a live chat's (issue 28). Every answer must be typed (a JSON refusal with a
 * known code, or a route's own success) and never a 5xx with a stack; the daemon stays up, and its
 * memory does not follow what it was sent.
 */

const SEGMENTS = [
  'constructor',
  '__proto__',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '..',
  '%2e%2e',
  '%2e%2e%2f%2e%2e%2fetc',
  '%2F',
  '%00',
  'a%00b',
  '%ff%fe',
  '%',
  '☃𝔘\u202e',
  encodeURIComponent('☃𝔘\u202e'),
  'x'.repeat(4096),
];
/** The segments also tried as every query value. */
const QUERY_SEGMENTS = new Set(['constructor', '__proto__', '%2e%2e', '%00', '%', 'x'.repeat(4096)]);
/** Every query name a route reads, each given the hostile value. */
const QUERY_NAMES = [
  'limit',
  'offset',
  'grep',
  'tab',
  'q',
  'code',
  'since',
  'timeout_secs',
  'parent',
  'epoch',
];
const CHUNKED_BODY = 12 * 1024 * 1024;
const PROVIDER_CHUNKED_BODY = 72 * 1024 * 1024;
const RSS_GROWTH_BOUND = 64 * 1024 * 1024;
const codes = new Set<string>(REFUSAL_CODES);

type Kind = 'none' | 'operator' | 'run' | 'chat';
type Outcome = { what: string; status: number; problem?: string };

/** Why an answer is not a typed one, or undefined when it is. */
function untyped(status: number, contentType: string, text: string): string | undefined {
  if (status === 0) return 'no answer (connection dropped)';
  if (status >= 500 && status !== 503) return `status ${status}`;
  if (/\bat [\w.<>]+ \(|node:internal|TypeError|ReferenceError/.test(text))
    return 'a stack or an internal error';
  if (status >= 400 && status !== 431) {
    // The dashboard's page answers a person: a 401 page that says how to log in.
    if (status === 401 && contentType.startsWith('text/html') && text.includes('crew dashboard'))
      return undefined;
    if (!contentType.includes('json')) return `a ${status} without a JSON body`;
    let body: { refusal?: { code?: string }; error?: { type?: string } };
    try {
      body = JSON.parse(text);
    } catch {
      return `a ${status} whose body is not JSON`;
    }
    // The provider gateway answers in the providers' own error shape.
    if (body.error?.type === 'crew_provider_gateway') return undefined;
    // MCP's own transport errors are JSON-RPC errors (its protocol's typed refusal).
    if (
      (body as { jsonrpc?: string }).jsonrpc === '2.0' &&
      typeof (body.error as { code?: unknown })?.code === 'number'
    )
      return undefined;
    if (!codes.has(String(body.refusal?.code))) return `a ${status} without a known refusal code`;
  }
  return undefined;
}

describe('a real crew serve: every route fuzzed (path segments, query values, chunked bodies) per token kind', () => {
  let d: DaemonProcess;
  let provider: FakeProvider;
  let slack: FakeSlack;
  const tokens = new Map<Kind, string | undefined>();
  let providerBase = '';

  beforeAll(async () => {
    provider = await startFakeProvider({ reply: 'fuzzed' });
    slack = new FakeSlack();
    await slack.start();
    const [node, sim] = bundledCommand('sim/main') as [string, string];
    // The simulator behind `tee`: what Crew sends the agent (its MCP server's Authorization header, which
    // carries the run's or the chat's token) lands in a file the test reads.
    const home = (await import('node:fs')).mkdtempSync(
      join((await import('node:os')).tmpdir(), 'crew-fuzz-'),
    );
    const wire = join(home, 'agent-stdin.jsonl');
    writeFileSync(wire, '');
    d = await startDaemonProcess({
      home,
      config: {
        'agent.max_subagents': 4,
        'providers.anthropic.upstream': provider.url,
        'slack.bot_token': 'xoxb-test-token',
        'slack.signing_secret': TEST_SIGNING_SECRET,
        'slack.api_url': slack.url,
        'chat.parent_agent': 'teesim',
        'agents.teesim': {
          runner: 'acp',
          command: ['sh', '-c', 'tee -a "$0" | "$1" "$2"', wire, node, sim],
          provider: 'anthropic',
        },
      },
    });
    tokens.set('none', undefined);
    tokens.set('operator', d.token);
    const spawned = await api(d, 'POST', '/api/spawn', { args: { task: '#sim hang', agent: 'teesim' } });
    expect(spawned.body.ok, JSON.stringify(spawned.body)).toBe(true);
    const chat = await api(d, 'POST', '/api/chats', {});
    expect(chat.body.ok, JSON.stringify(chat.body)).toBe(true);
    const found = await pollFor('the run and chat tokens on the agent’s stdin', () => {
      const text = readFileSync(wire, 'utf8');
      const run = /Bearer (crew_run_[\w-]+)/.exec(text)?.[1];
      const chatToken = /Bearer (crew_chat_[\w-]+)/.exec(text)?.[1];
      return run && chatToken ? { run, chat: chatToken } : undefined;
    });
    tokens.set('run', found.run);
    tokens.set('chat', found.chat);
    const resources = (await api(d, 'GET', '/api/resources')).body as { ok: boolean };
    expect(resources.ok).toBe(true);
    // The provider gateway's address: the proxy's URL is in no API answer, so it is read from the daemon's
    // own environment for the run (the agent's `CREW_PROVIDER_BASE_URL`), as an agent reads it.
    const environ = await pollFor('the run’s provider base URL', () => {
      for (const pid of childPids(d.proc.pid as number)) {
        try {
          const env = readFileSync(`/proc/${pid}/environ`, 'utf8');
          const base = /CREW_PROVIDER_BASE_URL=([^\0]+)/.exec(env)?.[1];
          if (base) return base;
        } catch {
          // gone
        }
      }
      return undefined;
    });
    providerBase = environ.replace(/\/p\/.*$/, '');
  }, 60_000);

  afterAll(async () => {
    expect(await d?.stop()).toBe(0);
    d?.cleanup();
    await provider?.close();
    await slack?.close();
  });

  const headersFor = (kind: Kind): Record<string, string> => {
    const token = tokens.get(kind);
    return token === undefined ? {} : { authorization: `Bearer ${token}` };
  };

  /**
   * One request as sent, byte for byte (node:http, not fetch: a WHATWG URL would turn `..` and `%2e%2e`
   * into a parent step before the daemon saw them). Non-ASCII characters are percent-encoded, as HTTP
   * requires.
   */
  function hit(
    url: string,
    method: string,
    kind: Kind,
    body?: string,
    passThrough = false,
  ): Promise<Outcome> {
    const { host, pathAndQuery } = splitUrl(url);
    const path = pathAndQuery.replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c));
    const what = `${kind} ${method} ${path.slice(0, 160)}`;
    return new Promise((resolve) => {
      const req = request(
        {
          host: host.split(':')[0],
          port: Number(host.split(':')[1]),
          path,
          method,
          headers: {
            host,
            ...headersFor(kind),
            accept: 'application/json, text/event-stream',
            ...(body !== undefined
              ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }
              : {}),
          },
          timeout: 10_000,
        },
        (res) => {
          const contentType = String(res.headers['content-type'] ?? '');
          // A stream (SSE) is typed by its content type; it is not waited on.
          if (contentType.includes('event-stream')) {
            res.destroy();
            resolve({ what, status: res.statusCode ?? 0 });
            return;
          }
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            text += chunk;
          });
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            // What the provider answers a forwarded call is the provider's, not Crew's, to type.
            const problem =
              passThrough && status > 0 && status < 500 ? undefined : untyped(status, contentType, text);
            resolve({ what, status, ...(problem ? { problem } : {}) });
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('no answer in 10 s')));
      req.on('error', (error) => resolve({ what, status: 0, problem: `no answer: ${error.message}` }));
      req.end(body);
    });
  }

  /** Runs `jobs` eight at a time. */
  async function pool(jobs: (() => Promise<Outcome>)[]): Promise<Outcome[]> {
    const out: Outcome[] = [];
    let next = 0;
    const worker = async () => {
      while (next < jobs.length) {
        const job = jobs[next++] as () => Promise<Outcome>;
        out.push(await job());
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    return out;
  }

  it('hostile path segments and query values on every route: typed answers, the daemon up, memory bounded', async () => {
    const routes = daemonRoutes();
    const kinds: Kind[] = ['none', 'operator', 'run', 'chat'];
    const before = rssOf(d.proc.pid as number);
    const jobs: (() => Promise<Outcome>)[] = [];
    for (const route of routes) {
      for (const method of methodsOf(route)) {
        for (const segment of SEGMENTS) {
          const path =
            route.path.includes(':') || route.path.endsWith('*')
              ? pathWith(route, segment)
              : `${route.path.replace(/\/$/, '')}/${segment}`;
          const query = QUERY_NAMES.map((name) => `${name}=${segment}`).join('&');
          for (const kind of kinds) {
            const body = method === 'GET' || method === 'HEAD' ? undefined : '{}';
            // `..` may land on GET /api/events (a long poll): it is asked not to wait.
            jobs.push(() => hit(`${d.url}${path}?timeout_secs=0`, method, kind, body));
            // The route itself, with every query value hostile (an event stream is not waited on); for
            // the tokens that get past authentication, and a few segments (each adds a request per route).
            if (
              QUERY_SEGMENTS.has(segment) &&
              (kind === 'operator' || kind === 'run') &&
              !route.path.includes(':') &&
              !route.path.endsWith('*')
            )
              jobs.push(() => hit(`${d.url}${route.path}?${query}`, method, kind, body));
          }
        }
      }
    }
    // The provider gateway: the token and provider segments, and what follows them.
    for (const segment of SEGMENTS) {
      for (const kind of kinds) {
        const token = tokens.get(kind) ?? 'no-token';
        for (const path of [
          `/p/${token}/${segment}/v1/messages`,
          `/p/${token}/anthropic/${segment}`,
          `/p/${segment}/anthropic/v1/messages`,
          `/${segment}`,
        ]) {
          // A live run's call to a configured provider is forwarded: the upstream's answer passes through.
          const forwarded = kind === 'run' && path.startsWith(`/p/${token}/anthropic/`);
          jobs.push(() =>
            hit(
              `${providerBase}${path}`,
              'POST',
              kind,
              '{"model":"m","max_tokens":1,"messages":[]}',
              forwarded,
            ),
          );
        }
      }
    }
    const outcomes = await pool(jobs);
    const wrong = outcomes.filter((o) => o.problem !== undefined);
    console.info(
      `route fuzz: ${outcomes.length} requests (${routes.length} routes, ${SEGMENTS.length} segments, ${kinds.length} token kinds, + provider gateway), ${outcomes.length - wrong.length} typed`,
    );
    expect(wrong.slice(0, 10)).toEqual([]);
    expect(d.proc.exitCode).toBeNull();
    expect((await api(d, 'GET', '/api/health')).status).toBe(200);
    expect(rssOf(d.proc.pid as number) - before).toBeLessThan(RSS_GROWTH_BOUND);
  }, 120_000);

  it('chunked bodies far over the limit on every route, per token kind: refused typed (413, or 401 before reading), memory bounded', async () => {
    const kinds: Kind[] = ['none', 'operator', 'run', 'chat'];
    const pid = d.proc.pid as number;
    const before = rssOf(pid);
    const outcomes: Outcome[] = [];
    const targets = daemonRoutes().flatMap((route) =>
      methodsOf(route)
        .filter((m) => m !== 'GET' && m !== 'HEAD')
        .map((method) => ({ method, url: `${d.url}${pathWith(route, 'constructor')}`, total: CHUNKED_BODY })),
    );
    for (const kind of kinds) {
      const token = tokens.get(kind) ?? 'no-token';
      const all = [
        ...targets,
        {
          method: 'POST',
          url: `${providerBase}/p/${token}/anthropic/v1/messages`,
          total: PROVIDER_CHUNKED_BODY,
        },
      ];
      for (const target of all) {
        const answer = await sendChunked(target.url, {
          method: target.method,
          headers: {
            ...headersFor(kind),
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          totalBytes: target.total,
        });
        const what = `${kind} ${target.method} ${target.url}`;
        let problem =
          answer.status === 502 && answer.text.includes('crew_provider_gateway')
            ? undefined
            : untyped(answer.status, answer.text.startsWith('{') ? 'application/json' : '', answer.text);
        // A live run's call is forwarded until the bound: the provider may give up first (a 502 then).
        const allowed =
          kind === 'run' && target.url.startsWith(providerBase) ? [413, 502] : [401, 403, 404, 413];
        if (!problem && !allowed.includes(answer.status)) problem = `status ${answer.status}`;
        outcomes.push({ what, status: answer.status, ...(problem ? { problem } : {}) });
      }
    }
    const wrong = outcomes.filter((o) => o.problem !== undefined);
    console.info(
      `chunked fuzz: ${outcomes.length} oversized bodies, ${outcomes.length - wrong.length} refused typed`,
    );
    expect(wrong).toEqual([]);
    expect(outcomes.filter((o) => o.status === 413).length).toBeGreaterThan(targets.length);
    expect(d.proc.exitCode).toBeNull();
    expect(rssOf(pid) - before).toBeLessThan(RSS_GROWTH_BOUND);
  }, 120_000);

  it('WebSocket upgrades on hostile paths and with each token kind: refused typed or opened, never dropped', async () => {
    const outcomes: Outcome[] = [];
    const ws = d.url.replace(/^http/, 'ws');
    for (const kind of ['none', 'operator', 'run', 'chat'] as Kind[]) {
      for (const path of [
        '/api/ws',
        ...SEGMENTS.map((s) => `/api/ws/${s}`),
        ...SEGMENTS.map((s) => `/${s}`),
      ]) {
        const status = await new Promise<number>((resolve) => {
          const socket = new WebSocket(`${ws}${path}`, { headers: headersFor(kind) });
          socket.on('open', () => {
            socket.terminate();
            resolve(101);
          });
          socket.on('unexpected-response', (_req, res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          });
          socket.on('error', () => resolve(0));
        });
        const expected = path === '/api/ws' ? (kind === 'operator' ? 101 : 401) : 404;
        outcomes.push({
          what: `${kind} ${path.slice(0, 80)}`,
          status,
          ...(status === expected ? {} : { problem: `expected ${expected}` }),
        });
      }
    }
    expect(outcomes.filter((o) => o.problem !== undefined)).toEqual([]);
    expect(d.proc.exitCode).toBeNull();
    // No token reached the security log.
    const sel = readFileSync(join(d.home, 'security_events.jsonl'), 'utf8');
    for (const token of tokens.values()) if (token) expect(sel).not.toContain(token);
  }, 60_000);
});

/** `http://host:port/path?query` → its host and its path as written (no normalising). */
function splitUrl(url: string): { host: string; pathAndQuery: string } {
  const match = /^https?:\/\/([^/]+)(.*)$/.exec(url);
  return { host: match?.[1] ?? '', pathAndQuery: match?.[2] || '/' };
}

/** The pids of `pid`'s descendants (Linux `/proc`). */
function childPids(pid: number): number[] {
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift() as number;
    let children = '';
    try {
      children = readFileSync(`/proc/${parent}/task/${parent}/children`, 'utf8');
    } catch {
      continue;
    }
    for (const child of children.trim().split(/\s+/).filter(Boolean).map(Number)) {
      out.push(child);
      queue.push(child);
    }
  }
  return out;
}
