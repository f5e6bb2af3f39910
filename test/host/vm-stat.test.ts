import { describe, expect, it } from 'vitest';
import { parseCount, VmStatParser } from '../../src/host/vm-stat.js';

const BANNER = 'Mach Virtual Memory Statistics: (page size of 16384 bytes)\n';
const HEADER =
  '    free   active   specul inactive throttle    wired  prgable   faults     copy    0fill reactive   purged file-backed anonymous cmprssed cmprssor  dcomprs   comprs  pageins  pageout  swapins swapouts\n';
const ROW1 =
  '   25410   480536    13618   467026        0   150817    24018 2340979K  1234567  8888888   123456    45678      500000    400000   100000    50000        0        0    12345        0        0        0\n';
const ROW2 =
  '   10000   480536     1000   200000        0   150817     5000     1234     1234     1234        0        0      500000    400000   100000    50000        0        0        0        0        0        0\n';

describe('VmStatParser', () => {
  it('answers (free + inactive + speculative + purgeable) × page size per row', () => {
    const parser = new VmStatParser();
    expect(parser.feed(BANNER + HEADER)).toBeUndefined();
    expect(parser.feed(ROW1)).toBe((25410 + 467026 + 13618 + 24018) * 16384);
    expect(parser.feed(ROW2)).toBe((10000 + 200000 + 1000 + 5000) * 16384);
  });

  it('reassembles rows split across chunks and keeps the last complete row', () => {
    const parser = new VmStatParser();
    const text = BANNER + HEADER + ROW1 + ROW2;
    let latest: number | undefined;
    for (let i = 0; i < text.length; i += 7) latest = parser.feed(text.slice(i, i + 7)) ?? latest;
    expect(latest).toBe((10000 + 200000 + 1000 + 5000) * 16384);
  });

  it('ignores rows before the banner and header, and survives the repeated header', () => {
    const parser = new VmStatParser();
    expect(parser.feed(ROW1)).toBeUndefined();
    expect(parser.feed(BANNER + HEADER + ROW1 + BANNER + HEADER)).toBe(
      (25410 + 467026 + 13618 + 24018) * 16384,
    );
  });

  it('reads the older layout (spec, no purgeable) with a 4 KiB page', () => {
    const parser = new VmStatParser();
    parser.feed('Mach Virtual Memory Statistics: (page size of 4096 bytes)\n');
    parser.feed(
      '  free active   spec inactive   wire   faults     copy    0fill reactive  pageins  pageout\n',
    );
    expect(
      parser.feed(
        '  1000   2000    300     4000    500    1000       10       20       30       40       50\n',
      ),
    ).toBe((1000 + 4000 + 300) * 4096);
  });
});

describe('parseCount', () => {
  it.each([
    ['12345', 12345],
    ['2340979K', 2_340_979_000],
    ['12M', 12_000_000],
    ['3G', 3_000_000_000],
    ['-1', undefined],
    ['12k', undefined],
  ])('%s → %s', (token, value) => {
    expect(parseCount(token)).toBe(value);
  });
});
