// The floor of bench/e2e: a bare Node process (no modules but p-limit loaded, as a user's script would be)
// spawns `true` with child_process.spawn, each until its `close`. Reads lines "wave N" or "singles N" on
// stdin and answers each with the milliseconds it took and the CPU it used.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import pLimit from 'p-limit';

const CAP = Number(process.argv[2] ?? 8);

function spawnTrue() {
  return new Promise((resolve, reject) => {
    const child = spawn('true');
    child.once('error', reject);
    child.once('close', () => resolve());
  });
}

const cpuMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

for await (const line of createInterface({ input: process.stdin })) {
  const [kind, n] = line.split(' ');
  const count = Number(n);
  const c0 = cpuMs();
  const t0 = performance.now();
  if (kind === 'wave') {
    const limit = pLimit(CAP);
    await Promise.all(Array.from({ length: count }, () => limit(spawnTrue)));
  } else {
    for (let i = 0; i < count; i++) await spawnTrue();
  }
  process.stdout.write(`${JSON.stringify({ ms: performance.now() - t0, cpuMs: cpuMs() - c0 })}\n`);
}
