import { closeSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { isCrewError } from '../../src/core/errors.js';
import { transcriptPath } from '../../src/transcripts/transcript-path.js';
import { cutMarker, TranscriptWriter } from '../../src/transcripts/transcript-writer.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'crew-transcript-'));
});
afterEach(() => {
  rmSync(home, { recursive: true, force: true });
});

const read = (path: string) => readFileSync(path, 'utf8');

describe('transcriptPath', () => {
  it('is $CREW_HOME/subagents/<id>/result.txt', () => {
    expect(transcriptPath('/h', 'run-1_a')).toBe('/h/subagents/run-1_a/result.txt');
  });

  it.each(['../x', 'a/b', '', '.', 'a b', '-x'])('refuses the id %j, which could leave subagents/', (id) => {
    try {
      transcriptPath('/h', id);
      expect.unreachable();
    } catch (error) {
      expect(isCrewError(error) && error.refusal).toMatchObject({ code: 'invalid_argument', path: 'id' });
    }
  });
});

describe('TranscriptWriter', () => {
  it('creates the file 0600 in a directory 0700', async () => {
    const path = transcriptPath(home, 'r1');
    const writer = TranscriptWriter.open(path, { maxBytes: 1024 });
    writer.write('hello\n');
    await writer.close();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, 'subagents', 'r1')).mode & 0o777).toBe(0o700);
    expect(read(path)).toBe('hello\n');
  });

  it('keeps output exactly at the bound without a cut', async () => {
    const path = transcriptPath(home, 'r2');
    const writer = TranscriptWriter.open(path, { maxBytes: 10 });
    writer.write('0123456789');
    const stats = await writer.close();
    expect(read(path)).toBe('0123456789');
    expect(stats).toMatchObject({ cut: false, bytesWritten: 10, charsWritten: 10, fileChars: 10 });
  });

  it('cuts at the byte bound with a marker, never splitting a multi-byte char that straddles it', async () => {
    const path = transcriptPath(home, 'r3');
    const writer = TranscriptWriter.open(path, { maxBytes: 10 });
    writer.write('abcdefghi'); // 9 bytes
    writer.write('€'); // 3 bytes: bytes 10-12 would straddle the bound
    writer.write('later output, dropped');
    const stats = await writer.close();
    expect(read(path)).toBe(`abcdefghi\n${cutMarker(9)}\n`);
    expect(cutMarker(9)).toBe('[transcript cut at 9 bytes (agent.transcript_max_bytes); the run went on]');
    expect(stats).toMatchObject({
      cut: true,
      bytesWritten: 9,
      charsWritten: 9,
      bytesReceived: 9 + 3 + 21,
      charsReceived: 9 + 1 + 21,
    });
    expect(stats.fileChars).toBe([...read(path)].length);
  });

  it('cuts inside a chunk at a 4-byte emoji', async () => {
    const path = transcriptPath(home, 'r4');
    const writer = TranscriptWriter.open(path, { maxBytes: 6 });
    writer.write('ab😀😀\n'); // a b (2) + 4 + 4 + 1: the second emoji straddles byte 6
    await writer.close();
    const text = read(path);
    expect(text).toBe(`ab😀\n${cutMarker(6)}\n`);
    expect(text).not.toContain('\uFFFD');
  });

  it('joins a surrogate pair split across two chunks', async () => {
    const path = transcriptPath(home, 'r5');
    const writer = TranscriptWriter.open(path, { maxBytes: 100 });
    writer.write('x\uD83D');
    writer.write('\uDE00y');
    const stats = await writer.close();
    expect(read(path)).toBe('x😀y');
    expect(stats.charsWritten).toBe(3);
  });

  it('writes many small chunks through a bounded buffer', async () => {
    const path = transcriptPath(home, 'r6');
    const writer = TranscriptWriter.open(path, { maxBytes: 10_000_000, bufferBytes: 4096 });
    const chunks = Array.from(
      { length: 50_000 },
      (_, i) => `${i % 7 === 0 ? '漢' : 'a'}${i % 100 === 0 ? '\n' : ''}`,
    );
    for (const [i, chunk] of chunks.entries()) {
      writer.write(chunk);
      // Write-through: never more than one buffer behind.
      if (i % 5000 === 4999) {
        const written = statSync(path).size;
        const sent = Buffer.byteLength(chunks.slice(0, i + 1).join(''));
        expect(sent - written).toBeLessThan(4096);
      }
    }
    const stats = await writer.close();
    expect(read(path)).toBe(chunks.join(''));
    expect(stats.bytesWritten).toBe(Buffer.byteLength(chunks.join('')));
  });

  it('flushes buffered output after flushAfterMs on the injected clock and leaves no timer', async () => {
    const clock = new FakeClock();
    const path = transcriptPath(home, 'r7');
    const writer = TranscriptWriter.open(path, { maxBytes: 1000, clock, flushAfterMs: 250 });
    writer.write('partial');
    expect(read(path)).toBe('');
    await clock.advance(249);
    expect(read(path)).toBe('');
    await clock.advance(1);
    expect(read(path)).toBe('partial');
    writer.write(' more');
    await writer.close();
    expect(read(path)).toBe('partial more');
    expect(clock.pendingTimers()).toBe(0);
  });

  it('ignores writes after close and closes once', async () => {
    const path = transcriptPath(home, 'r8');
    const writer = TranscriptWriter.open(path, { maxBytes: 100 });
    writer.write('a');
    await writer.close();
    writer.write('b');
    const stats = await writer.close();
    expect(read(path)).toBe('a');
    expect(stats.bytesReceived).toBe(1);
  });

  it.runIf(process.platform === 'linux')('never throws when a write fails; reports once', async () => {
    const path = transcriptPath(home, 'r9');
    const errors: unknown[] = [];
    const writer = TranscriptWriter.open(path, {
      maxBytes: 1000,
      bufferBytes: 1,
      onError: (e) => errors.push(e),
    });
    // Pull the descriptor out from under the writer, as a failing disk would.
    for (const fd of readdirSync('/proc/self/fd')) {
      try {
        if (readlinkSync(`/proc/self/fd/${fd}`) === path) closeSync(Number(fd));
      } catch {
        // fds come and go while listing
      }
    }
    expect(() => {
      writer.write('one');
      writer.write('two');
    }).not.toThrow();
    const stats = await writer.close();
    expect(errors).toHaveLength(1);
    expect(stats.error).toBeDefined();
  });
});
