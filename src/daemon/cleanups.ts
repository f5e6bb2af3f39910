/** One thing the daemon closes at shutdown. */
export type Cleanup = () => Promise<void> | void;

/**
 * What the daemon closes, run in the reverse of the order it was added: each start step adds its own
 * right after it opens it, so what was opened later (and may use what came before) closes first. A
 * failing close does not stop the rest. Used at shutdown and when a later step fails to start.
 */
export class Cleanups {
  private readonly list: Cleanup[] = [];

  add(...cleanups: Cleanup[]): void {
    this.list.push(...cleanups);
  }

  async runAll(): Promise<void> {
    for (const cleanup of [...this.list].reverse()) {
      try {
        await cleanup();
      } catch {
        // keep closing the rest
      }
    }
    this.list.length = 0;
  }
}
