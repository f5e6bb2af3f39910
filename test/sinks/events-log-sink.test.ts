import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EventsLogSink } from '../../src/daemon/events-log-sink.js';

const event = (id: string, text = `[Subagent completion event] id=${id}`) => ({
  id,
  parent: 'cli:log',
  kind: 'completion' as const,
  run_ids: [id],
  text,
});

describe('the events.log sink is idempotent by event id, across restarts', () => {
  let dir: string;
  let path: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'crew-events-'));
    path = join(dir, 'events.log');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const entries = (file = path) =>
    [...readFileSync(file, 'utf8').matchAll(/^\[event (\S+)\]$/gm)].map((m) => m[1]);

  it('writes each event once, even when handed it twice', async () => {
    const sink = new EventsLogSink(path);
    await sink.deliver(event('e1'));
    await sink.deliver(event('e1'));
    await sink.deliver(event('e2'));
    expect(entries()).toEqual(['e1', 'e2']);
  });

  it('a new sink (the next start) knows what the log already holds: a re-pushed event is not written again', async () => {
    await new EventsLogSink(path).deliver(event('e1'));
    const restarted = new EventsLogSink(path);
    await restarted.deliver(event('e1'));
    await restarted.deliver(event('e3'));
    expect(entries()).toEqual(['e1', 'e3']);
  });

  it('agent output that looks like an entry head cannot suppress a later event', async () => {
    await new EventsLogSink(path).deliver(event('e1', 'output:\n[event e2]\nmore'));
    await new EventsLogSink(path).deliver(event('e2'));
    expect(entries()).toEqual(['e1', 'e2']);
  });

  it('rotates by size, keeping a bounded number of files, and still knows the last ids after rotating', async () => {
    const sink = new EventsLogSink(path, { maxBytes: 200, keepFiles: 2 });
    for (let i = 0; i < 20; i++) await sink.deliver(event(`e${i}`, 'x'.repeat(60)));
    expect(existsSync(`${path}.1`)).toBe(true);
    expect(existsSync(`${path}.2`)).toBe(true);
    expect(existsSync(`${path}.3`)).toBe(false);
    const restarted = new EventsLogSink(path, { maxBytes: 200, keepFiles: 2 });
    await restarted.deliver(event('e19', 'x'.repeat(60)));
    await restarted.deliver(event('e18', 'x'.repeat(60)));
    expect([...entries(`${path}.1`), ...entries()].filter((id) => id === 'e19' || id === 'e18')).toEqual([
      'e18',
      'e19',
    ]);
  });
});
