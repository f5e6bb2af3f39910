/** `crew/host`: host probes, the process-tree sampler and the cap sizing (DESIGN §5). */

export { sizeCapAtStart } from './cap-at-start.js';
export { createHostProbe } from './create-host-probe.js';
export type { HostProbe, MemoryReading } from './host-probe.js';
export { MemoryGate } from './memory-gate.js';
export { type ResourceStatus, resourceStatus } from './resource-status.js';
export { ProcessTreeSampler } from './sampler.js';
