import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The on-disk registry of the worktrees and branches Crew made: one small JSON file per run beside its
 * worktree (`<root>/<run id>.json`). The files, not the store, say what exists, so a restart finds every
 * worktree a killed daemon left (the store may have lost its last writes; the files are written before the
 * worktree is made and removed only after the branch is gone).
 */
export interface WorkspaceMeta {
  runId: string;
  repo: string;
  branch: string;
  /** The worktree; present while it exists. */
  path?: string;
  base: string;
  /** A kept conversation's worktree (kept until released). */
  keep: boolean;
  /** The branch holds commits beyond its base. */
  changed: boolean;
  /** Merged by spawn_merge. */
  merged: boolean;
  createdAt: number;
  endedAt?: number;
  /** The branch goes at this time (set when its run's transcript TTL passed or its conversation was released). */
  deleteAfter?: number;
}

const RUN_ID = /^[A-Za-z0-9_-]{1,128}$/;
let writes = 0;

export class MetaDir {
  constructor(readonly root: string) {}

  pathOf(runId: string): string {
    // Internal: run ids are Crew's own (checked at the edge); this guards the paths against a bug.
    if (!RUN_ID.test(runId)) throw new Error(`not a run id: ${runId}`);
    return join(this.root, `${runId}.json`);
  }

  worktreeOf(runId: string): string {
    // Internal, as above.
    if (!RUN_ID.test(runId)) throw new Error(`not a run id: ${runId}`);
    return join(this.root, runId);
  }

  async write(meta: WorkspaceMeta): Promise<void> {
    await mkdir(this.root, { recursive: true, mode: 0o700 });
    const file = this.pathOf(meta.runId);
    // A name per write: two writes of one file at once must not rename each other's temporary file.
    const tmp = `${file}.${process.pid}.${++writes}.tmp`;
    await writeFile(tmp, `${JSON.stringify(meta)}\n`, { mode: 0o600 });
    await rename(tmp, file);
  }

  async read(runId: string): Promise<WorkspaceMeta | undefined> {
    try {
      return JSON.parse(await readFile(this.pathOf(runId), 'utf8')) as WorkspaceMeta;
    } catch {
      return undefined;
    }
  }

  async remove(runId: string): Promise<void> {
    await rm(this.pathOf(runId), { force: true });
  }

  /** Every meta file, oldest first (by creation). Unreadable files are skipped. */
  async all(): Promise<WorkspaceMeta[]> {
    let names: string[];
    try {
      names = await readdir(this.root);
    } catch {
      return [];
    }
    const metas: WorkspaceMeta[] = [];
    for (const name of names) {
      if (!name.endsWith('.json')) continue;
      const meta = await this.read(name.slice(0, -'.json'.length));
      if (meta) metas.push(meta);
    }
    return metas.sort((a, b) => a.createdAt - b.createdAt);
  }

  /** Directories under the root with no meta file: worktrees whose registration never completed. */
  async strays(): Promise<string[]> {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(this.root, { withFileTypes: true });
    } catch {
      return [];
    }
    const metas = new Set(entries.filter((e) => e.name.endsWith('.json')).map((e) => e.name.slice(0, -5)));
    return entries.filter((e) => e.isDirectory() && !metas.has(e.name)).map((e) => join(this.root, e.name));
  }
}
