import { closeSync, ftruncateSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type KeepMode, truncate } from '../../src/core/truncate.js';
import { fileSource } from '../../src/transcripts/file-bytes.js';
import { countSourceChars, readPreview } from '../../src/transcripts/transcript-preview.js';
import { TranscriptWriter } from '../../src/transcripts/transcript-writer.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'crew-preview-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('readPreview', () => {
  const text = `first line 漢字\n${'body 😀 text é\n'.repeat(400)}last line 👍🏽 end`;

  it.each<[KeepMode, number]>([
    ['head', 50],
    ['tail', 50],
    ['both', 51],
    ['head', 1],
    ['tail', 3],
  ])(
    'matches truncate() on the same text (keep=%s, %i chars), counting the file itself',
    async (keep, keepChars) => {
      const path = join(dir, 'result.txt');
      writeFileSync(path, text);
      expect(await readPreview(fileSource(path), { keep, keepChars })).toEqual(
        truncate(text, { keep, keepChars }),
      );
    },
  );

  it('returns the whole file when it fits or keepChars is 0', async () => {
    const path = join(dir, 'small.txt');
    writeFileSync(path, 'short 😀');
    expect(await readPreview(fileSource(path), { keep: 'head', keepChars: 7 })).toEqual({
      text: 'short 😀',
      kept: 7,
      total: 7,
      truncated: false,
    });
    writeFileSync(path, text);
    expect((await readPreview(fileSource(path), { keep: 'tail', keepChars: 0 })).text).toBe(text);
  });

  it('counts chars of a file in bounded chunks', async () => {
    const path = join(dir, 'count.txt');
    writeFileSync(path, '€'.repeat(100_000));
    expect(await countSourceChars(fileSource(path))).toBe(100_000);
  });

  it('uses the writer-tracked total, marker included', async () => {
    const path = join(dir, 'sub', 'result.txt');
    const writer = TranscriptWriter.open(path, { maxBytes: 100 });
    writer.write('é'.repeat(80)); // 160 bytes: cut at 100
    const stats = await writer.close();
    const preview = await readPreview(fileSource(path), {
      keep: 'tail',
      keepChars: 20,
      totalChars: stats.fileChars,
    });
    expect(preview.total).toBe(await countSourceChars(fileSource(path)));
    expect(preview.text.endsWith('the run went on]\n')).toBe(true);
  });

  it('reads only the head and tail of a 200 MB transcript', async () => {
    // A sparse file: a known head and tail around 200 MB of zeros the preview must not read.
    const path = join(dir, 'huge.txt');
    const sizeBytes = 200 * 1024 * 1024;
    const fd = openSync(path, 'w');
    ftruncateSync(fd, sizeBytes);
    writeSync(fd, 'HEAD😀 of the run\n', 0);
    const tail = '\nthe end: ok ✓';
    writeSync(fd, tail, sizeBytes - Buffer.byteLength(tail));
    closeSync(fd);
    const rssBefore = process.memoryUsage().rss;
    const started = performance.now();
    const preview = await readPreview(fileSource(path), {
      keep: 'both',
      keepChars: 40,
      totalChars: sizeBytes,
    });
    const elapsedMs = performance.now() - started;
    const rssGrowth = process.memoryUsage().rss - rssBefore;
    expect(preview.text.startsWith('HEAD😀 of the run\n')).toBe(true);
    expect(preview.text.endsWith('\n…\n\u0000\u0000\u0000\u0000\u0000\u0000\nthe end: ok ✓')).toBe(true);
    expect(preview).toMatchObject({ kept: 40, total: sizeBytes, truncated: true });
    expect(rssGrowth).toBeLessThan(20 * 1024 * 1024);
    expect(elapsedMs).toBeLessThan(500);
  });
});
