import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A committed fixture tree under `test/fixtures/host/`. */
export function fixtureRoot(name: string): string {
  return join(import.meta.dirname, '../fixtures/host', name);
}

/** A scratch copy of a fixture tree that a test may change; `dispose` removes it. */
export function copyFixture(name: string): { root: string; dispose: () => void } {
  const root = mkdtempSync(join(tmpdir(), `crew-host-${name}-`));
  cpSync(fixtureRoot(name), root, { recursive: true });
  return { root, dispose: () => rmSync(root, { recursive: true, force: true }) };
}

/** `/proc/self/auxv` bytes: 64-bit little-endian (key, value) pairs, ending with AT_NULL. */
export function auxvBytes(pairs: ReadonlyArray<readonly [number, number]>): Buffer {
  const buffer = Buffer.alloc((pairs.length + 1) * 16);
  pairs.forEach(([key, value], i) => {
    buffer.writeBigUInt64LE(BigInt(key), i * 16);
    buffer.writeBigUInt64LE(BigInt(value), i * 16 + 8);
  });
  return buffer;
}

/** Writes an auxv with 16 KiB pages and 250 clock ticks per second (plus unrelated keys around them). */
export function writeAuxv16k250(root: string): void {
  const AT_HWCAP = 16;
  const AT_PAGESZ = 6;
  const AT_CLKTCK = 17;
  const AT_PHDR = 3;
  writeFileSync(
    join(root, 'proc/self/auxv'),
    auxvBytes([
      [33, 0x7ffd_1234_5000],
      [AT_HWCAP, 0x178bfbff],
      [AT_PAGESZ, 16384],
      [AT_CLKTCK, 250],
      [AT_PHDR, 0x5555_5555_4040],
    ]),
  );
}
