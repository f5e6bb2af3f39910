import type { AcpRuntime } from './acp-runtime.js';

/**
 * Runtimes known by a key (DESIGN §6, Runners): a hosted chat's parent process is registered as
 * `chat:<id>`, so the chat's eligible children can be placed in it as extra sessions. An entry is
 * forgotten when its process dies or its owner closes it; a key then names nothing until the owner opens
 * a fresh runtime under it.
 */
export class HostedRuntimes {
  private readonly entries = new Map<string, { runtime: AcpRuntime; argv: readonly string[] }>();

  /** Registers `runtime` (already initialized) under `key`, replacing whatever was there. */
  set(key: string, runtime: AcpRuntime, argv: readonly string[]): void {
    const entry = { runtime, argv };
    this.entries.set(key, entry);
    runtime.onDeath(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
  }

  /**
   * The live runtime under `key` when it runs exactly `argv` (a child that would run another command
   * cannot live in it); undefined otherwise.
   */
  live(key: string, argv: readonly string[]): AcpRuntime | undefined {
    const entry = this.entries.get(key);
    if (!entry || entry.runtime.isDown || !sameArgv(entry.argv, argv)) return undefined;
    return entry.runtime;
  }

  /** Forgets `key`; the runtime it named, if any. */
  take(key: string): AcpRuntime | undefined {
    const entry = this.entries.get(key);
    this.entries.delete(key);
    return entry?.runtime;
  }

  clear(): void {
    this.entries.clear();
  }
}

export function sameArgv(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((arg, i) => arg === b[i]);
}
