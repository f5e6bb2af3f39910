import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';
import { dmEvent, type FakeMessage, FakeSlack, postToSlackRoute, TEST_SIGNING_SECRET } from './fake-slack.js';

const USER = 'U0PAGER';

function sectionsText(m: FakeMessage): string {
  return (m.blocks ?? [])
    .filter((b) => b.type === 'section')
    .map((b) => b.text?.text ?? '')
    .join('');
}

const fenceLines = (text: string) => text.split('\n').filter((l) => l.startsWith('```')).length;

/** 300 numbered lines with a TypeScript block across the first message boundary: about 16,000 chars. */
function longAnswer(): string {
  const lines: string[] = ['#sim echo'];
  for (let i = 1; i <= 300; i++) {
    if (i === 60) lines.push('```ts');
    lines.push(`line ${String(i).padStart(3, '0')} ${'x'.repeat(40)}`);
    if (i === 120) lines.push('```');
  }
  return lines.join('\n');
}

describe('Slack long results and paged status over the signed protocol (issue 28)', () => {
  let slack: FakeSlack;
  let d: DaemonProcess;

  async function dm(text: string): Promise<FakeMessage> {
    const event = dmEvent(USER, text);
    const r = await postToSlackRoute(d.url, event.body);
    expect(r.status).toBe(200);
    const [reply] = await pollFor(`a reply to "${text.slice(0, 40)}"`, () => {
      const replies = slack.replies(event.ts);
      return replies.length >= 1 ? replies : undefined;
    });
    return reply as FakeMessage;
  }

  beforeAll(async () => {
    slack = new FakeSlack();
    await slack.start();
    // The default completion_keep_chars (3,000): Slack must not be cut by it.
    d = await startDaemonProcess({
      config: {
        'slack.bot_token': 'xoxb-test-token',
        'slack.signing_secret': TEST_SIGNING_SECRET,
        'slack.allowed_users': [USER],
        'slack.api_url': slack.url,
      },
    });
  }, 60_000);

  afterAll(async () => {
    await d?.stop();
    d?.cleanup();
    await slack?.close();
  });

  it('a 16,000-char result comes whole as 3,900-char messages, in order, at line ends, fences closed and reopened; status pages with offset', async () => {
    const task = longAnswer();
    const started = await dm(`spawn ${task}`);
    const runId = /`([\w-]+)`/.exec(started.text ?? '')?.[1] as string;
    expect(runId).toBeTruthy();
    const transcript = await pollFor('the run to complete', async () => {
      const r = await api(d, 'GET', `/api/runs/${runId}`);
      return (r.body.run as { status?: string } | undefined)?.status === 'completed'
        ? (r.body.text as string)
        : undefined;
    });
    expect(transcript.length).toBeGreaterThan(15_000);
    const parts = await pollFor('every part of the result DM', () => {
      const eventId = slack.results()[0]?.metadata?.event_payload.event_id;
      const got = eventId ? slack.resultParts(eventId) : [];
      const of = /part 1 of (\d+)/.exec(JSON.stringify(got[0]?.blocks ?? []))?.[1];
      return of !== undefined && got.length === Number(of) ? got : undefined;
    });
    // 15,000+ chars: four messages at least, each but the last filled close to 3,900.
    expect(parts.length).toBeGreaterThanOrEqual(4);
    const texts = parts.map(sectionsText);
    expect(parts.map((p) => p.metadata?.event_payload.part)).toEqual(texts.map((_, i) => i));
    for (const [i, text] of texts.entries()) {
      expect(text.length, `part ${i}`).toBeLessThanOrEqual(3900);
      expect(fenceLines(text) % 2, `part ${i} leaves a fence open`).toBe(0);
      if (i < texts.length - 1) {
        expect(text.endsWith('\n') || text.endsWith('\n```'), `part ${i}`).toBe(true);
        expect(text.length, `part ${i}`).toBeGreaterThan(3800);
      }
    }
    // The fence the first message ends inside is closed there and reopened, language kept, in the next.
    const cutInFence = texts.findIndex((t) => t.endsWith('\n```'));
    expect(cutInFence).toBeGreaterThanOrEqual(0);
    expect(texts[cutInFence + 1]?.startsWith('```ts\n')).toBe(true);
    const whole = texts
      .map((t, i) => (i > 0 && texts[i - 1]!.endsWith('\n```') ? t.slice(t.indexOf('\n') + 1) : t))
      .map((t, i) => (i < texts.length - 1 && t.endsWith('\n```') ? t.slice(0, -4) : t))
      .join('');
    expect(whole.startsWith(`[Subagent completion event] id=${runId}`)).toBe(true);
    expect(whole).toContain(transcript.trimEnd());
    expect(whole).not.toContain('result.txt');
    expect(whole).not.toContain('[truncated');

    const first = await dm(`spawn status ${runId}`);
    expect(first.text).toContain(
      `lines 1–40 of ${transcript.split('\n').length - (transcript.endsWith('\n') ? 1 : 0)}`,
    );
    expect(first.text).toContain('line 039 ');
    const next = /Next page: `spawn status [\w-]+ offset=(\d+)`/.exec(first.text ?? '')?.[1];
    expect(next).toBe('40');
    const second = await dm(`spawn status ${runId} offset=${next}`);
    expect(second.text).toContain('lines 41–80 of');
    expect(second.text).toContain('line 040 ');
    expect(second.text).not.toContain('line 039 ');
    expect(second.text).toMatch(/Next page: `spawn status [\w-]+ offset=80`/);
    const bad = await dm(`spawn status ${runId} offset=-3`);
    expect(bad.text).toMatch(/offset=<line>/);
  }, 90_000);
});
