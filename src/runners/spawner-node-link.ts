import { type ChildProcess, spawn } from 'node:child_process';
import {
  endChild,
  type FromSpawner,
  type LinkEvents,
  type SpawnerLink,
  settledAt,
  type ToSpawner,
} from './spawner-link.js';
import { SPAWNER_SCRIPT } from './spawner-script.js';

/** The Node helper (spawner-script.ts) over Node's IPC channel: where no native helper can be built. */
export class NodeSpawnerLink implements SpawnerLink {
  readonly kind = 'node' as const;
  private readonly helper: ChildProcess;
  private readonly gone: Promise<void>;

  constructor(execPath: string, events: LinkEvents) {
    const helper = spawn(execPath, ['-e', SPAWNER_SCRIPT], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'advanced',
      // Its own group: a terminal's Ctrl-C reaches the daemon, which then closes it in order.
      detached: true,
      env: { PATH: process.env.PATH ?? '' },
    });
    this.helper = helper;
    this.gone = settledAt(helper, 'exit');
    helper.on('message', (message: FromSpawner) => events.onMessage(message));
    helper.on('error', () => {});
    helper.once('exit', () => events.onExit());
  }

  get pid(): number | undefined {
    return this.helper.pid;
  }

  get connected(): boolean {
    return this.helper.connected;
  }

  send(message: ToSpawner): void {
    this.helper.send(message);
  }

  close(): Promise<void> {
    const helper = this.helper;
    // Closing the channel ends it (its `disconnect` handler exits); a kill backs that up.
    return endChild(helper, this.gone, () => {
      if (helper.connected) helper.disconnect();
    });
  }
}
