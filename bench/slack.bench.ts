/**
 * bench/slack: Slack's path through Crew against a bare Bolt 5 app answering the same signed event, both
 * against one loopback fake Slack Web API (`test/slack/fake-slack.ts`) in this process.
 *
 * - Crew: a real daemon (`startDaemon`: SQLite store, file transcripts, the simulator) with Slack in HTTP
 *   mode. Per iteration a signed DM `spawn #sim sleep=20ms` goes to `POST /slack/events`; measured are the
 *   HTTP answer, signed event → run admitted (the gateway's commit, seen through `gateway.watch`), and run
 *   completion (its `ended_at`) → the result DM received by the fake Web API.
 * - Baseline: a bare Bolt app (its own HTTPReceiver with the signing secret, `app.event('message')`) that
 *   posts one `chat.postMessage` when its listener runs. Measured: the HTTP answer, signed event →
 *   listener, and listener → its message received by the fake: the floor of "an event in, a DM out".
 * Iterations alternate between the two, after warm-up.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, LogLevel } from '@slack/bolt';
import { startDaemon } from '../src/daemon/daemon.js';
import { signSlackRequest } from '../src/slack/slack-signature.js';
import { dmEvent, FakeSlack, postToSlackRoute, TEST_SIGNING_SECRET } from '../test/slack/fake-slack.js';

const ITERATIONS = Number(process.env.BENCH_SLACK_ITERATIONS ?? 40);
const WARMUP = 5;
const USER = 'U0BENCH';

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
}

async function until<T>(fn: () => T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 1));
  }
}

const load = loadavg()[0] ?? 0;
const slack = new FakeSlack();
await slack.start();

// ── Crew ─────────────────────────────────────────────────────────────────────────────────────────
const home = mkdtempSync(join(tmpdir(), 'crew-bench-slack-'));
writeFileSync(
  join(home, 'config.json'),
  JSON.stringify({
    'agent.subagent_spawn_stagger_secs': 0,
    'agent.spawn_min_memory_gb': 0,
    'slack.bot_token': 'xoxb-bench',
    'slack.signing_secret': TEST_SIGNING_SECRET,
    'slack.allowed_users': [USER],
    'slack.api_url': slack.url,
  }),
);
const daemon = await startDaemon({
  crewHome: home,
  port: 0,
  cwd: home,
  env: process.env,
  log: () => undefined,
});
const admittedAt = new Map<string, number>();
const known = new Set<string>();
daemon.gateway.watch((change) => {
  if (change.kind !== 'runs') return;
  for (const id of change.runIds) {
    if (!known.has(id)) {
      known.add(id);
      admittedAt.set(id, performance.now());
    }
  }
});

async function crewOnce(): Promise<{
  answerMs: number;
  quietAnswerMs: number;
  admitMs: number;
  dmMs: number;
}> {
  // An event that starts nothing (\`spawn list\`): the answer with no process start after it on this loop.
  const quiet = await postToSlackRoute(daemon.url, dmEvent(USER, 'spawn list').body);
  if (quiet.status !== 200) throw new Error(`crew answered ${quiet.status}`);
  const event = dmEvent(USER, 'spawn #sim sleep=20ms');
  const before = new Set(known);
  const t0 = performance.now();
  const answer = await postToSlackRoute(daemon.url, event.body);
  if (answer.status !== 200) throw new Error(`crew answered ${answer.status}`);
  const runId = await until(() => [...known].find((id) => !before.has(id)));
  const admitMs = (admittedAt.get(runId) as number) - t0;
  const dm = await until(() =>
    slack.results().find((m) => m.blocks?.[0]?.text?.text.startsWith(`Run ${runId} `)),
  );
  const status = await daemon.gateway.status(runId, { kind: 'operator' });
  if (!status.ok || status.run.ended_at === undefined) throw new Error('no end time');
  return {
    answerMs: answer.ms,
    quietAnswerMs: quiet.ms,
    admitMs,
    dmMs: dm.at - Date.parse(status.run.ended_at),
  };
}

// ── bare Bolt ────────────────────────────────────────────────────────────────────────────────────
let listenerAt = 0;
let boltChannelSeq = 0;
const bolt = new App({
  signingSecret: TEST_SIGNING_SECRET,
  token: 'xoxb-bench',
  clientOptions: { slackApiUrl: slack.url },
  logLevel: LogLevel.ERROR,
});
bolt.event('message', async ({ event, client }) => {
  listenerAt = performance.now();
  const m = event as unknown as { channel: string; user: string };
  await client.chat.postMessage({ channel: `${m.channel}-bolt-${++boltChannelSeq}`, text: 'ok' });
});
const boltServer = (await bolt.start(0)) as unknown as { address(): AddressInfo };
const boltUrl = `http://127.0.0.1:${boltServer.address().port}`;

async function boltOnce(): Promise<{ answerMs: number; listenerMs: number; dmMs: number }> {
  const event = dmEvent(USER, 'spawn #sim sleep=20ms');
  const channel = `D${USER}-bolt-${boltChannelSeq + 1}`;
  listenerAt = 0;
  const t0 = performance.now();
  const wall0 = Date.now();
  const response = await fetch(`${boltUrl}/slack/events`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-slack-request-timestamp': String(Math.floor(wall0 / 1000)),
      'x-slack-signature': signSlackRequest(
        TEST_SIGNING_SECRET,
        String(Math.floor(wall0 / 1000)),
        event.body,
      ),
    },
    body: event.body,
  });
  await response.text();
  const answerMs = performance.now() - t0;
  if (response.status !== 200) throw new Error(`bolt answered ${response.status}`);
  const listened = await until(() => (listenerAt > 0 ? listenerAt : undefined));
  const posted = await until(() => slack.messages.find((m) => m.channel === channel));
  const listenerWall = wall0 + (listened - t0);
  return { answerMs, listenerMs: listened - t0, dmMs: posted.at - listenerWall };
}

const crew = { answer: [] as number[], quiet: [] as number[], admit: [] as number[], dm: [] as number[] };
const base = { answer: [] as number[], listener: [] as number[], dm: [] as number[] };
for (let i = 0; i < WARMUP + ITERATIONS; i++) {
  const c = await crewOnce();
  const b = await boltOnce();
  if (i < WARMUP) continue;
  crew.answer.push(c.answerMs);
  crew.quiet.push(c.quietAnswerMs);
  crew.admit.push(c.admitMs);
  crew.dm.push(c.dmMs);
  base.answer.push(b.answerMs);
  base.listener.push(b.listenerMs);
  base.dm.push(b.dmMs);
}

// Every result was posted once: no event id twice.
const ids = slack
  .results()
  .map((m) => `${m.metadata?.event_payload.event_id}/${m.metadata?.event_payload.part}`);
const duplicates = ids.length - new Set(ids).size;

await bolt.stop();
await daemon.shutdown(1000);
await slack.close();
rmSync(home, { recursive: true, force: true });

const f = (n: number) => n.toFixed(2);
const row = (name: string, crewMs: number[], baseMs: number[]) =>
  `| ${name} | ${f(percentile(baseMs, 0.5))} | ${f(percentile(crewMs, 0.5))} | ${f(percentile(crewMs, 0.5) / percentile(baseMs, 0.5))} | ${f(percentile(baseMs, 0.99))} | ${f(percentile(crewMs, 0.99))} | ${f(percentile(crewMs, 0.99) / percentile(baseMs, 0.99))} |`;
const maxAnswer = Math.max(...crew.answer, ...crew.quiet);
const lines = [
  '# bench/slack',
  '',
  `A real daemon (\`startDaemon\` in this process: SQLite store, file transcripts, the simulator; Slack in HTTP mode) and a bare Bolt 5 app (its own HTTPReceiver and signing secret, one \`app.event('message')\` listener that posts one \`chat.postMessage\`), both against one loopback fake Slack Web API in the same process. ${ITERATIONS} signed DMs \`spawn #sim sleep=20ms\` to each, alternating, after ${WARMUP} warm-up rounds. Host: ${availableParallelism()} CPUs, load average ${load.toFixed(1)} at the start.`,
  '',
  '| step | bare Bolt p50 ms | Crew p50 ms | ratio p50 | bare Bolt p99 ms | Crew p99 ms | ratio p99 |',
  '|---|---:|---:|---:|---:|---:|---:|',
  row('HTTP answer to Slack (signed POST → 200)', crew.answer, base.answer),
  row('HTTP answer to an event that starts nothing (Crew: `spawn list`)', crew.quiet, base.answer),
  row('signed event → handled (Bolt: listener runs; Crew: run admitted)', crew.admit, base.listener),
  row(
    "→ DM received by the Web API (Bolt: listener → its post; Crew: run's end → result DM)",
    crew.dm,
    base.dm,
  ),
  '',
  "The client, both servers and the simulator's parent share one event loop here: Crew answers Slack before it admits the run (the work is dispatched after the answer), but starting the simulator process right after holds the loop, so the client reads the answer late. The `spawn list` row, whose work starts no process, shows the answer itself.",
  '',
  "Crew's \"→ DM\" starts at the run's `ended_at` and includes writing the completion event, the outbox relay, rendering the event from the transcript file, the ledger's two SQLite writes around the post, and the post; the first DM of a user also opens the DM channel (`conversations.open`, cached after). End times are whole milliseconds.",
  '',
  '## Verdicts',
  '',
  `- Slack's 3-second ack deadline: **${maxAnswer < 3000 ? 'met' : 'missed'}** (slowest answer to a signed event ${f(maxAnswer)} ms over ${ITERATIONS * 2} events).`,
  `- Exactly once: **${duplicates === 0 ? 'met' : 'missed'}** (${ids.length} result messages posted, ${duplicates} duplicated).`,
  `- Signed event → run admitted, side by side with a bare Bolt app answering the same event: reported above (p50 ${f(percentile(crew.admit, 0.5))} ms against Bolt's ${f(percentile(base.listener, 0.5))} ms to its listener: ${f(percentile(crew.admit, 0.5) / percentile(base.listener, 0.5))}×). The issue names no target, so no met/missed.`,
  `- Completion → DM, side by side: reported above (p50 ${f(percentile(crew.dm, 0.5))} ms against Bolt's ${f(percentile(base.dm, 0.5))} ms for one post: ${f(percentile(crew.dm, 0.5) / percentile(base.dm, 0.5))}×). No target named.`,
];
const text = `${lines.join('\n')}\n`;
writeFileSync(join(import.meta.dirname, 'results', 'slack.md'), text);
console.log(text);
