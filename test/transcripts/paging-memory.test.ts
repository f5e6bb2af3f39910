import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileSource } from '../../src/transcripts/file-bytes.js';
import { pageTranscript } from '../../src/transcripts/paging.js';

const MIB = 1024 * 1024;
const LINES_PER_BLOCK = 10_000;
let dir: string;
let path: string;
let totalLines = 0;

/** Writes ~100 MB of transcript (every 50,000th line holds `needle`) from one reused block. */
function writeHugeTranscript(target: string): void {
  const filler = 'x'.repeat(80);
  const fd = openSync(target, 'w');
  try {
    let written = 0;
    let line = 0;
    while (written < 100 * MIB) {
      const rows: string[] = [];
      for (let i = 0; i < LINES_PER_BLOCK; i++, line++) {
        rows.push(line % 50_000 === 0 ? `line ${line} needle 😀 found` : `line ${line} ${filler} é`);
      }
      const block = Buffer.from(`${rows.join('\n')}\n`);
      writeSync(fd, block);
      written += block.length;
    }
    totalLines = line;
  } finally {
    closeSync(fd);
  }
}

/** Runs `work` while sampling RSS; returns its result and the peak RSS growth. */
async function peakRssGrowth<T>(work: () => Promise<T>): Promise<{ result: T; growthBytes: number }> {
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 5);
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { result, growthBytes: peak - baseline };
  } finally {
    clearInterval(sampler);
  }
}

describe('paging a 100 MB transcript', () => {
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'crew-paging-huge-'));
    path = join(dir, 'result.txt');
    writeHugeTranscript(path);
    expect(statSync(path).size).toBeGreaterThanOrEqual(100 * MIB);
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('greps with a literal pattern, growing RSS by under 50 MB', async () => {
    const { result, growthBytes } = await peakRssGrowth(() =>
      pageTranscript(fileSource(path), { grep: 'needle', limit: 5, maxChars: 200_000 }),
    );
    expect(growthBytes).toBeLessThan(50 * MIB);
    expect(result.totalLines).toBe(totalLines);
    // Five matches shown (lines 1, 50001, … 200001); the scan stopped at the sixth, where offset resumes.
    expect(result.text.split('\n').slice(0, 3)).toEqual([
      `[lines 1-250000 of ${totalLines} | more available — call again with offset=250000]`,
      '1: line 0 needle 😀 found',
      '50001: line 50000 needle 😀 found',
    ]);
  });

  it('greps with a regular expression, growing RSS by under 50 MB', async () => {
    const { result, growthBytes } = await peakRssGrowth(() =>
      pageTranscript(fileSource(path), { grep: 'ne+dle \\S+ fo', offset: 1, maxChars: 200_000 }),
    );
    expect(growthBytes).toBeLessThan(50 * MIB);
    expect(result.more).toBe(false);
    expect(result.text.split('\n')[1]).toBe('50001: line 50000 needle 😀 found');
  });

  it('pages the end without holding the lines before it', async () => {
    const { result, growthBytes } = await peakRssGrowth(() =>
      pageTranscript(fileSource(path), { offset: totalLines - 2, maxChars: 200_000 }),
    );
    expect(growthBytes).toBeLessThan(50 * MIB);
    expect(result.text).toBe(
      `[lines ${totalLines - 1}-${totalLines} of ${totalLines}]\nline ${totalLines - 2} ${'x'.repeat(80)} é\nline ${totalLines - 1} ${'x'.repeat(80)} é`,
    );
  });
});
