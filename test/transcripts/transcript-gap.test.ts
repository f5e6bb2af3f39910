import { describe, expect, it } from 'vitest';
import type { ByteSink } from '../../src/transcripts/transcript-bytes.js';
import { gapMarker, TranscriptWriter } from '../../src/transcripts/transcript-writer.js';

/**
 * Issue 28, item 5: one failed write (a full disk) must not silence a transcript for good. Later writes are
 * tried again; the bytes that were lost are counted (`gapBytes`) and a marker line says how many, where.
 */

/** A sink whose writes fail with ENOSPC while `full` is set; what it accepted, as text. */
class FlakySink implements ByteSink {
  full = false;
  /** Bytes a failing write still lets through before it throws (a partial write). */
  partial = 0;
  text = '';
  closedChars: number | undefined;

  write(bytes: Uint8Array): void {
    if (this.full) {
      const through = Math.min(this.partial, bytes.length);
      this.text += Buffer.from(bytes.subarray(0, through)).toString('utf8');
      const error = Object.assign(new Error('ENOSPC: no space left on device, write'), {
        code: 'ENOSPC',
        writtenBytes: through,
      });
      throw error;
    }
    this.text += Buffer.from(bytes).toString('utf8');
  }

  close(chars: number): void {
    this.closedChars = chars;
  }
}

const line = (i: number) => `line ${String(i).padStart(2, '0')}\n`;

describe('a transcript after a failed write', () => {
  it('80 lines, the disk full for lines 10-24: every line after space returns is there, with a gap marker', async () => {
    const sink = new FlakySink();
    const errors: unknown[] = [];
    // One line per flush, as a slow agent's output reaches the file.
    const writer = new TranscriptWriter(sink, {
      maxBytes: 1 << 20,
      bufferBytes: 1,
      onError: (e) => errors.push(e),
    });
    for (let i = 0; i < 80; i++) {
      sink.full = i >= 10 && i < 25;
      writer.write(line(i));
    }
    const stats = await writer.close();
    const lost = 15 * line(0).length;
    expect(stats.gapBytes).toBe(lost);
    const expected = [
      ...Array.from({ length: 10 }, (_, i) => line(i)),
      `${gapMarker(lost, 'ENOSPC: no space left on device, write')}\n`,
      ...Array.from({ length: 55 }, (_, i) => line(i + 25)),
    ].join('');
    expect(sink.text).toBe(expected);
    // The chars the file holds, as the preview reader is told.
    expect(stats.fileChars).toBe([...expected].length);
    expect(sink.closedChars).toBe([...expected].length);
    expect(stats.error).toMatch(/ENOSPC/);
    // Reported once, not once per line.
    expect(errors).toHaveLength(1);
  });

  it('a partial write counts only the bytes that did not land, and the marker starts on its own line', async () => {
    const sink = new FlakySink();
    const writer = new TranscriptWriter(sink, { maxBytes: 1 << 20, bufferBytes: 1, onError: () => {} });
    writer.write('first\n');
    sink.full = true;
    sink.partial = 4;
    writer.write('0123456789\n');
    sink.full = false;
    writer.write('after\n');
    const stats = await writer.close();
    expect(stats.gapBytes).toBe(7);
    expect(sink.text).toBe(`first\n0123\n${gapMarker(7, 'ENOSPC: no space left on device, write')}\nafter\n`);
  });

  it('still full when the marker is due: the gap grows, and one marker covers it all once space returns', async () => {
    const sink = new FlakySink();
    const writer = new TranscriptWriter(sink, { maxBytes: 1 << 20, bufferBytes: 1, onError: () => {} });
    sink.full = true;
    writer.write('a\n');
    writer.write('b\n');
    writer.write('c\n');
    sink.full = false;
    writer.write('d\n');
    const stats = await writer.close();
    expect(stats.gapBytes).toBe(6);
    expect(sink.text).toBe(`${gapMarker(6, 'ENOSPC: no space left on device, write')}\nd\n`);
  });

  it('no failure: no gap, no marker', async () => {
    const sink = new FlakySink();
    const writer = new TranscriptWriter(sink, { maxBytes: 1 << 20, bufferBytes: 1 });
    writer.write('x\n');
    const stats = await writer.close();
    expect(stats.gapBytes).toBe(0);
    expect(sink.text).toBe('x\n');
  });
});
