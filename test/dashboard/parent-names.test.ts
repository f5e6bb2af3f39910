import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { CLIENT_NAME_MAX, cleanClientName } from '../../src/core/client-name.js';
import { parentNameLookup } from '../../src/daemon/parent-name-lookup.js';
import { createApp } from '../../src/http/app.js';
import { ClientNames } from '../../src/http/client-names.js';
import { dashboardAuthenticator, mountDashboardRoutes } from '../../src/http/dashboard-routes.js';
import { Tokens } from '../../src/http/tokens.js';
import { fakeWorld } from '../helpers/fake-gateway.js';
import { worldDashboard } from './world-dashboard.js';

// biome-ignore lint/suspicious/noExplicitAny: the tests read answers loosely and assert their fields
type Loose = any;
const HOST = 'crew.test:7878';
const OPERATOR = 'operator-token-for-tests-0123456789';
// biome-ignore lint/suspicious/noExplicitAny: the page's module is plain JavaScript
const view: any = await import(pathToFileURL(join(process.cwd(), 'src/dashboard/assets/view.js')).href);

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** `kept`: wired as the daemon is: admission keeps the name with each run, the dashboard reads it back. */
function rig(options: { kept?: boolean } = {}) {
  const clientNames = new ClientNames(4);
  const world = fakeWorld(options.kept ? { parentNameOf: (parent) => clientNames.get(parent) } : {});
  const live = (parent: string) => clientNames.get(parent);
  const dashboard = worldDashboard(world, {
    parentName: options.kept ? parentNameLookup(live, world.store) : live,
  });
  const { app, closeSessions } = createApp({
    gateway: world.gateway,
    tokens: new Tokens(OPERATOR),
    allowedHosts: () => [HOST],
    resources: () => ({}),
    setConfig: () => undefined,
    authenticate: dashboardAuthenticator(dashboard, () => 'c'),
    clientNames,
  });
  mountDashboardRoutes(app, { dashboard, gateway: world.gateway, cookieName: () => 'c', baseUrl: () => '' });
  const fetchApp = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const headers = new Headers(request.headers);
    headers.set('host', HOST);
    return app.request(new Request(request, { headers }));
  };
  const connect = async (name: string, headers: Record<string, string> = {}) => {
    const transport = new StreamableHTTPClientTransport(new URL(`http://${HOST}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${OPERATOR}`, ...headers } },
      fetch: fetchApp,
    });
    const client = new Client({ name, version: '1' });
    await client.connect(transport);
    return { client, transport };
  };
  cleanups.push(async () => {
    dashboard.close();
    await closeSessions();
    await world.gateway.close();
  });
  return { world, dashboard, clientNames, connect, fetchApp };
}

describe('parent names of MCP sessions', () => {
  it('a session that is its own parent shows under the name its client gave in initialize, cleaned, until it closes', async () => {
    const { world, dashboard, clientNames, connect, fetchApp } = rig();
    const { client, transport } = await connect('claude-code\u001b[31m\u202e\u0000');
    const spawned = await client.callTool({ name: 'spawn_run', arguments: { task: 'sleep=10 x' } });
    expect(spawned.isError).toBeFalsy();
    await world.clock.advance(0);
    const parent = `mcp:${transport.sessionId}`;
    const snapshot = dashboard.snapshot();
    expect(snapshot.page.rows[0]?.parent).toBe(parent);
    expect(snapshot.parent_names).toEqual([[parent, 'claude-code[31m']]);
    const answer: Loose = await (
      await fetchApp(`http://${HOST}/api/dashboard/runs?tab=all`, {
        headers: { authorization: `Bearer ${OPERATOR}` },
      })
    ).json();
    expect(answer.parent_names).toEqual([[parent, 'claude-code[31m']]);
    const id = snapshot.page.rows[0]?.kind === 'run' ? snapshot.page.rows[0].node.run.id : '';
    const detail: Loose = await (
      await fetchApp(`http://${HOST}/api/dashboard/runs/${id}`, {
        headers: { authorization: `Bearer ${OPERATOR}` },
      })
    ).json();
    expect(detail.parent_name).toBe('claude-code[31m');
    // What a person reads in the list and the detail panel.
    expect(view.parentLabel(parent, detail.parent_name).label).toBe(
      `claude-code[31m (session ${String(transport.sessionId).slice(0, 8)})`,
    );
    await transport.terminateSession();
    await client.close();
    expect(clientNames.get(parent)).toBeUndefined();
    expect(dashboard.snapshot().parent_names).toEqual([]);
  });

  it("wired as the daemon is, a session's runs keep its client name after it closes and once the live names are gone", async () => {
    const { world, dashboard, clientNames, connect, fetchApp } = rig({ kept: true });
    const { client, transport } = await connect('claude-code\u202e\u001b[2J');
    await client.callTool({ name: 'spawn_run', arguments: { task: 'sleep=10 x' } });
    await world.clock.advance(0);
    const parent = `mcp:${transport.sessionId}`;
    await transport.terminateSession();
    await client.close();
    expect(clientNames.get(parent)).toBeUndefined();
    expect(dashboard.snapshot().parent_names).toEqual([[parent, 'claude-code[2J']]);
    const id = world.store.runs({ parents: [parent] })[0]?.run.id;
    const detail: Loose = await (
      await fetchApp(`http://${HOST}/api/dashboard/runs/${id}`, {
        headers: { authorization: `Bearer ${OPERATOR}` },
      })
    ).json();
    expect(detail.parent_name).toBe('claude-code[2J');
    expect(detail.run.parent_name).toBe('claude-code[2J');
    // The detail panel reads the run's own kept name when the page has none for its parent.
    const fields = new Map(view.runFields(detail.run) as [string, string][]);
    expect(fields.get('Parent')).toBe(`claude-code[2J (session ${parent.slice(4, 12)})`);
    // A bridge's parent, or a person, asks the store nothing and has no name.
    expect(dashboard.parentNames(['mcp:codex@proj', 'slack:U1', 'run:r1'])).toEqual([]);
  });

  it("a refusal's parent is named too: the snapshot carries its name for the refusals list", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crew-refusal-names-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const selPath = join(dir, 'security_events.jsonl');
    const parent = 'mcp:0123abcd-0000-4000-8000-000000000000';
    writeFileSync(
      selPath,
      `${JSON.stringify({
        ts: '2026-01-01T00:00:00.000Z',
        event_type: 'admission',
        source: parent,
        tool_name: 'spawn_run',
        outcome: 'rejected_empty_task',
        metadata: { parent },
      })}\n`,
    );
    const world = fakeWorld();
    const dashboard = worldDashboard(world, {
      selPath,
      parentName: (key) => (key === parent ? 'codex' : undefined),
    });
    cleanups.push(async () => {
      dashboard.close();
      await world.gateway.close();
    });
    const snapshot = dashboard.snapshot();
    expect(snapshot.refusals[0]?.parent).toBe(parent);
    expect(snapshot.parent_names).toEqual([[parent, 'codex']]);
    expect(view.parentLabel(parent, 'codex').label).toBe('codex (session 0123abcd)');
  });

  it('a parent named by X-Crew-Parent keeps its name; no client name is recorded for it', async () => {
    const { clientNames, connect } = rig();
    const { client } = await connect('codex', { 'x-crew-parent': 'codex@proj' });
    await client.callTool({ name: 'spawn_run', arguments: { task: 'sleep=10 x' } });
    expect(clientNames.size).toBe(0);
    expect(view.parentLabel('mcp:codex@proj', undefined).label).toBe('codex@proj');
  });

  it('keeps at most its bound of names, the oldest forgotten first', () => {
    const names = new ClientNames(2);
    names.set('mcp:a', 'a');
    names.set('mcp:b', 'b');
    names.set('mcp:c', 'c');
    expect([names.get('mcp:a'), names.get('mcp:b'), names.get('mcp:c'), names.size]).toEqual([
      undefined,
      'b',
      'c',
      2,
    ]);
  });

  it('cleans hostile names: control and format characters go, length is bounded, non-strings and blanks are none', () => {
    expect(cleanClientName('claude\u0007-code\u200b\u2028 \t x')).toBe('claude-code x');
    expect(cleanClientName('x'.repeat(1_000_000))).toHaveLength(CLIENT_NAME_MAX);
    expect(Array.from(cleanClientName('😀'.repeat(500)) ?? '')).toHaveLength(CLIENT_NAME_MAX);
    expect(cleanClientName(42)).toBeUndefined();
    expect(cleanClientName({ toString: () => 'x' })).toBeUndefined();
    expect(cleanClientName(' \u0000\u202e ')).toBeUndefined();
    expect(view.parentLabel('mcp:0123abcd-0000-4000-8000-000000000000', undefined).label).toBe(
      'MCP session 0123abcd',
    );
  });
});
