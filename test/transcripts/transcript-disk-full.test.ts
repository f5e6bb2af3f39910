import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { defaultConfig } from '../../src/core/config-schema.js';
import { createGateway } from '../../src/gateway/create-gateway.js';
import { FakeRunner } from '../../src/runners/fake-runner.js';
import { MemorySelSink } from '../../src/sel/memory-sel-sink.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { FileTranscripts } from '../../src/transcripts/file-transcripts.js';
import { fakeAgent } from '../helpers/fake-gateway.js';

/**
 * Issue 28, item 5 against a real full filesystem: CREW_HOME on a 1 MiB tmpfs. A run's transcript loses
 * the lines written while the disk is full, and keeps every line after space returns; the run shows
 * `transcript_gap` and the transcript a marker line where the bytes went missing. Needs root to mount
 * (these machines run tests as root; CI fails loudly without it).
 */

const MOUNT = mkdtempSync(join(tmpdir(), 'crew-tmpfs-'));
const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', MOUNT]).status === 0;
if (!mounted && process.env.CI === 'true') throw new Error('the disk-full test cannot mount a tmpfs on CI');

describe.runIf(mounted)('a transcript on a filesystem that fills up and frees again', () => {
  afterAll(() => {
    spawnSync('umount', [MOUNT]);
    rmSync(MOUNT, { recursive: true, force: true });
  });
  beforeAll(() => mkdirSync(join(MOUNT, 'home')));

  it('80 lines, 25 of them while the disk is full: the 55 after are kept, the gap is marked and on the run', async () => {
    const crewHome = join(MOUNT, 'home');
    const clock = new FakeClock();
    const runner = new FakeRunner({ clock, plan: () => ({ hang: true, output: ['line 00\n'] }) });
    const transcripts = new FileTranscripts(crewHome, { maxBytes: 1 << 20, clock, grepWorkerFile: null });
    const gateway = createGateway(
      { ...defaultConfig(), 'agent.subagent_spawn_stagger_secs': 0, 'agent.spawn_min_memory_gb': 0 },
      {
        clock,
        runner,
        store: new MemoryStore(),
        sel: new MemorySelSink(clock),
        transcripts,
        agents: new Map([['sim', fakeAgent('sim')]]),
        cap: 3,
        defaultCwd: '/tmp',
      },
    );
    const spawned = gateway.spawn('mcp:p', { task: 'talk' });
    if (!spawned.ok) throw new Error('refused');
    const id = spawned.runs[0]!.id;
    await clock.advance(300);
    const op = { kind: 'operator' } as const;
    // Each line reaches the file on its own flush (250 ms after it arrives), as a slow agent's would.
    const say = async (i: number) => {
      // 3 KiB a line: a full tmpfs still takes writes into a page it already gave the file.
      await gateway.steer(id, `line ${String(i).padStart(2, '0')} ${'x'.repeat(3072)}\n`, 'follow_up', op);
      await clock.advance(300);
    };
    for (let i = 1; i < 25; i++) {
      if (i === 5) writeFileSync(join(MOUNT, 'filler'), Buffer.alloc(0));
      if (i >= 5) {
        // Fill what is left: writes now fail with ENOSPC.
        try {
          writeFileSync(join(MOUNT, 'filler'), Buffer.alloc(2 << 20), { flag: 'a' });
        } catch {
          // full: as meant
        }
      }
      await say(i);
    }
    unlinkSync(join(MOUNT, 'filler'));
    for (let i = 25; i < 80; i++) await say(i);
    gateway.cancel(id, op);
    await clock.advance(300);
    await gateway.close();
    await transcripts.close();
    const text = readFileSync(join(crewHome, 'subagents', id, 'result.txt'), 'utf8');
    for (let i = 25; i < 80; i++) expect(text).toContain(`line ${String(i).padStart(2, '0')}`);
    expect(text).toMatch(
      /\n\[transcript gap: \d+ bytes of output were lost here \(write failed: ENOSPC[^\]]*\)\]\n/,
    );
    const [view] = gateway.views([id], op);
    expect(view?.transcript_gap).toBeGreaterThan(0);
    const lost = Number(/\[transcript gap: (\d+) bytes/.exec(text)?.[1]);
    expect(view?.transcript_gap).toBe(lost);
  }, 30_000);
});
