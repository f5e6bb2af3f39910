import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { MemorySelSink } from '../../src/sel/memory-sel-sink.js';
import { type SelEvent, type SelRecord, toSelRecord } from '../../src/sel/sel-event.js';
import type { SelSink } from '../../src/sel/sel-sink.js';
import { SelWriter, selPath } from '../../src/sel/sel-writer.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'crew-sel-'));
});
afterEach(() => {
  rmSync(home, { recursive: true, force: true });
});

const START_MS = Date.UTC(2025, 0, 2, 3, 4, 5, 678);
const readRecords = (path: string): SelRecord[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as SelRecord);

const refusedQueueFull: SelEvent = {
  event_type: 'admission',
  source: 'mcp:abc',
  tool_name: 'spawn_run',
  outcome: 'refused_queue_full',
  metadata: { max_queued: 32, queue_depth: 32 },
};

describe('SelWriter', () => {
  it('appends one JSON object per line with ts from the clock', async () => {
    const clock = new FakeClock(START_MS);
    const path = selPath(home);
    const writer = new SelWriter({ path, clock });
    writer.write(refusedQueueFull);
    await clock.advance(1500);
    writer.write({ event_type: 'config', source: 'config', tool_name: '', outcome: 'config_bounds_clamped' });
    await writer.close();
    const lines = readFileSync(path, 'utf8').split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('');
    expect(JSON.parse(lines[0]!)).toEqual({
      ts: '2025-01-02T03:04:05.678Z',
      event_type: 'admission',
      source: 'mcp:abc',
      tool_name: 'spawn_run',
      outcome: 'refused_queue_full',
      metadata: { max_queued: 32, queue_depth: 32 },
    });
    expect(JSON.parse(lines[1]!)).toMatchObject({ ts: '2025-01-02T03:04:07.178Z', metadata: {} });
    expect(Object.keys(JSON.parse(lines[0]!))).toEqual([
      'ts',
      'event_type',
      'source',
      'tool_name',
      'outcome',
      'metadata',
    ]);
  });

  it('creates the log 0600 and appends to an existing one', async () => {
    const clock = new FakeClock(START_MS);
    const path = selPath(home);
    writeFileSync(path, '{"old":true}\n', { mode: 0o644 });
    const writer = new SelWriter({ path, clock });
    writer.write(refusedQueueFull);
    await writer.close();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, 'utf8').startsWith('{"old":true}\n{"ts":')).toBe(true);
  });

  it('redacts task text and every other string in metadata, however deep', async () => {
    const clock = new FakeClock(START_MS);
    const path = selPath(home);
    const writer = new SelWriter({ path, clock });
    writer.write({
      event_type: 'admission',
      source: 'mcp:abc',
      tool_name: 'spawn_run',
      outcome: 'rejected_empty_task',
      metadata: {
        task_preview: 'deploy with AKIAIOSFODNN7EXAMPLE',
        nested: { args: ['--token=ghp_16C7e42F292c6912E7710c838347Ae178B4a', 3] },
        url: 'https://webhook.site/abc',
        count: 2,
        flag: true,
        none: null,
      },
    });
    await writer.close();
    const [record] = readRecords(path);
    expect(record!.metadata).toEqual({
      task_preview: 'deploy with [REDACTED:aws_key]',
      nested: { args: ['--token=[REDACTED:github_token]', 3] },
      url: '[REDACTED:exfil_url]',
      count: 2,
      flag: true,
      none: null,
    });
    expect(readFileSync(path, 'utf8')).not.toContain('AKIA');
  });

  it('rotates at the bound, keeping 5 files', async () => {
    const clock = new FakeClock(START_MS);
    const path = selPath(home);
    const maxBytes = 1000;
    const writer = new SelWriter({ path, clock, maxBytes });
    const lineBytes = Buffer.byteLength(
      `${JSON.stringify(toSelRecord({ ...refusedQueueFull, metadata: { n: 100 } }, START_MS))}\n`,
    );
    const perFile = Math.floor(maxBytes / lineBytes);
    const total = perFile * 8 + 3; // enough to rotate past .5
    for (let n = 100; n < 100 + total; n++) writer.write({ ...refusedQueueFull, metadata: { n } });
    await writer.close();
    expect(existsSync(`${path}.5`)).toBe(true);
    expect(existsSync(`${path}.6`)).toBe(false);
    const files = [`${path}.5`, `${path}.4`, `${path}.3`, `${path}.2`, `${path}.1`, path];
    const seen = files.flatMap((file) => readRecords(file).map((r) => r.metadata.n as number));
    for (const file of files) expect(statSync(file).size).toBeLessThanOrEqual(maxBytes);
    // Oldest first across the files, newest last, nothing out of order or duplicated; the oldest dropped.
    expect(seen).toEqual(Array.from({ length: seen.length }, (_, i) => 100 + total - seen.length + i));
    expect(seen.length).toBe(perFile * 5 + (total % perFile || perFile));
    expect(seen[0]).toBeGreaterThan(100);
  });

  it('never throws when the log cannot be written, and reports once', async () => {
    const clock = new FakeClock(START_MS);
    // The "directory" is a file: no user, root included, can create the log under it.
    const notADir = join(home, 'not-a-dir');
    writeFileSync(notADir, '');
    const errors: unknown[] = [];
    const writer = new SelWriter({
      path: join(notADir, 'security_events.jsonl'),
      clock,
      onError: (e) => errors.push(e),
    });
    expect(() => {
      writer.write(refusedQueueFull);
      writer.write(refusedQueueFull);
      writer.write(refusedQueueFull);
    }).not.toThrow();
    await writer.close();
    expect(errors).toHaveLength(1);
  });

  it('never throws even when the error reporter throws', () => {
    const writer = new SelWriter({
      path: join(home, 'missing', '\u0000bad'),
      clock: new FakeClock(START_MS),
      onError: () => {
        throw new Error('reporter down');
      },
    });
    expect(() => writer.write(refusedQueueFull)).not.toThrow();
  });

  it('recovers after a failure and reports a later failure again', async () => {
    const clock = new FakeClock(START_MS);
    const dir = join(home, 'later');
    const path = join(dir, 'sel.jsonl');
    writeFileSync(dir, ''); // a file where the directory should be
    const errors: unknown[] = [];
    const writer = new SelWriter({ path, clock, maxBytes: 10, keepFiles: 1, onError: (e) => errors.push(e) });
    writer.write(refusedQueueFull);
    expect(errors).toHaveLength(1);
    rmSync(dir);
    writer.write(refusedQueueFull);
    expect(readRecords(path)).toHaveLength(1);
    // Rotation fails (the log cannot be renamed over a directory): a new run of failures, reported once.
    mkdirSync(`${path}.1/blocker`, { recursive: true });
    writer.write(refusedQueueFull);
    writer.write(refusedQueueFull);
    await writer.close();
    expect(errors).toHaveLength(2);
  });

  it('drops writes after close', async () => {
    const path = selPath(home);
    const writer = new SelWriter({ path, clock: new FakeClock(START_MS) });
    writer.write(refusedQueueFull);
    await writer.close();
    writer.write(refusedQueueFull);
    expect(readRecords(path)).toHaveLength(1);
  });
});

describe('MemorySelSink', () => {
  it('stores the same redacted records the file writer would', async () => {
    const clock = new FakeClock(START_MS);
    const sink: SelSink = new MemorySelSink(clock);
    const event: SelEvent = {
      ...refusedQueueFull,
      outcome: 'admitted',
      metadata: { task_preview: 'use sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789' },
    };
    sink.write(event);
    await sink.close();
    sink.write(event);
    const memory = sink as MemorySelSink;
    expect(memory.records).toEqual([toSelRecord(event, START_MS)]);
    expect(memory.withOutcome('admitted')[0]!.metadata.task_preview).toBe('use [REDACTED:anthropic_key]');
  });
});

describe('toSelRecord', () => {
  it('keeps a time the caller stamped, and stamps one that is missing or not a time', () => {
    const event = {
      event_type: 'config',
      source: 'gateway',
      tool_name: 'config',
      outcome: 'config_bounds_clamped',
    };
    expect(toSelRecord({ ...event, ts: '2024-06-01T00:00:00.000Z' }, START_MS).ts).toBe(
      '2024-06-01T00:00:00.000Z',
    );
    expect(toSelRecord({ ...event, ts: 'not a time' }, START_MS).ts).toBe('2025-01-02T03:04:05.678Z');
    expect(toSelRecord(event, START_MS).ts).toBe('2025-01-02T03:04:05.678Z');
  });

  it('accepts outcomes beyond the known ones and bounds long strings', () => {
    const record = toSelRecord(
      {
        event_type: 'audit',
        source: 'cli',
        tool_name: 'crew cancel',
        outcome: 'cancel_requested',
        metadata: { big: 'y'.repeat(10_000) },
      },
      START_MS,
    );
    expect(record.outcome).toBe('cancel_requested');
    expect([...(record.metadata.big as string)]).toHaveLength(4096);
  });

  it('turns values JSON cannot hold into safe ones', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const record = toSelRecord(
      {
        event_type: 'audit',
        source: 'cli',
        tool_name: '',
        outcome: 'ended',
        metadata: {
          big: 10n,
          inf: Number.POSITIVE_INFINITY,
          err: new Error('boom password=hunter2'),
          cyclic,
        },
      },
      START_MS,
    );
    expect(() => JSON.stringify(record)).not.toThrow();
    expect(record.metadata).toMatchObject({
      big: '10',
      inf: 'Infinity',
      err: 'boom password=[REDACTED:secret]',
    });
  });
});
