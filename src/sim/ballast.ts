/**
 * Load a turn really puts on the host, so the gateway's sampler and cost learning see true numbers:
 * touched memory (RSS grows, not just virtual size) and a busy fraction of one core.
 */

const SLAB_BYTES = 16 * 1024 * 1024;

/**
 * Allocates `bytes` in 16 MiB slabs and writes every slab, so each page is resident. Hold the result for
 * as long as the memory should count; drop it to free it.
 */
export function allocateTouched(bytes: number): Buffer[] {
  const slabs: Buffer[] = [];
  for (let left = bytes; left > 0; left -= SLAB_BYTES) {
    // allocUnsafe leaves fresh pages untouched; fill writes them so they become resident.
    slabs.push(Buffer.allocUnsafe(Math.min(left, SLAB_BYTES)).fill(0x5a));
  }
  return slabs;
}

const BURN_PERIOD_MS = 100;

/**
 * Keeps one core busy for `fraction` of the time until the returned function is called: busy for
 * `fraction × 100 ms`, then idle for the rest of each period. The idle part yields to the event loop, so
 * the agent keeps talking while it burns.
 */
export function startCpuBurn(fraction: number): () => void {
  if (fraction <= 0) return () => {};
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const period = () => {
    if (stopped) return;
    const until = Date.now() + fraction * BURN_PERIOD_MS;
    let x = 0;
    while (Date.now() < until) x = (x + 1) % 1_000_003;
    timer = setTimeout(period, Math.max(0, (1 - fraction) * BURN_PERIOD_MS));
  };
  period();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
