/**
 * `crew/runners`: the runners that start real processes (the ACP runner and the command runner). They
 * pull in the ACP SDK and `node:child_process`, so the root entry leaves them to this subpath.
 */

export { AcpRunner } from './acp-runner.js';
export { CommandRunner } from './command-runner.js';
