/** `crew/host`: host probes, the process-tree sampler and the cap sizing (DESIGN §5). */

export { sizeCapAtStart } from './cap-at-start.js';
export { MemoryGate } from './memory-gate.js';
export { createHostProbe, type HostProbe, type MemoryReading } from './probe.js';
export { type ResourceStatus, resourceStatus } from './resource-status.js';
export { ProcessTreeSampler } from './sampler.js';
