import { createHash } from 'node:crypto';
import { CgroupV2Containment, probeCgroupV2 } from './cgroup-cell.js';
import { ProcessGroupContainment } from './process-group-cell.js';
import type { Containment } from './run-cell.js';

export interface CreateContainmentOptions {
  /** Names Crew's cgroup directory, so two gateways on a host keep apart. */
  crewHome: string;
  /** `process_group` forces the fallback (`CREW_CONTAINMENT=process_group`). @default 'auto' */
  mode?: 'auto' | 'process_group';
}

/**
 * The containment a gateway's runs get: a cgroup v2 per run where the host allows it, else the process
 * group tree (see run-cell.ts). A cgroup containment is swept first: what a crashed gateway left
 * (processes and directories) is ended and removed.
 */
export async function createContainment(options: CreateContainmentOptions): Promise<Containment> {
  if (options.mode === 'process_group')
    return new ProcessGroupContainment(
      'process group tree: cgroups turned off (CREW_CONTAINMENT=process_group)',
    );
  const hash = createHash('sha256').update(options.crewHome).digest('hex').slice(0, 12);
  const probed = probeCgroupV2(`crew-${hash}`);
  if (probed instanceof CgroupV2Containment) {
    await probed.sweep();
    return probed;
  }
  return new ProcessGroupContainment(`process group tree: ${probed.reason}`);
}

/** Where a containment is `process_group` by default (tests and embedders without a CREW_HOME). */
export const processGroupContainment: Containment = new ProcessGroupContainment(
  'process group tree: no containment was chosen for this runner',
);
