import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { CrewFault } from '../core/errors.js';
import { readGatewayFile } from './daemon-address.js';

/** A second gateway on the same `CREW_HOME` refuses to start; this says which one runs. */
export function gatewayLocked(pid: number, url: string | undefined): CrewFault {
  return new CrewFault(
    'gateway_locked',
    `another Crew gateway is running on this CREW_HOME (pid ${pid}${url ? `, ${url}` : ''}); stop it first (kill ${pid}) or set CREW_HOME to another directory`,
    { pid, ...(url !== undefined ? { url } : {}) },
  );
}

/**
 * Takes `$CREW_HOME/gateway.lock` (O_EXCL create holding our pid). A lock whose pid no longer runs is
 * stale (a crashed gateway) and is taken over. Returns the release function.
 */
export function acquireLock(crewHome: string): () => void {
  const path = join(crewHome, 'gateway.lock');
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return () => {
        try {
          if (readFileSync(path, 'utf8').trim() === String(process.pid)) unlinkSync(path);
        } catch {
          // already gone
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number.parseInt(readFileSafe(path), 10);
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isRunning(holder)) {
        throw gatewayLocked(holder, readGatewayFile(crewHome)?.url);
      }
      try {
        unlinkSync(path);
      } catch {
        // someone else took it over first; try again
      }
    }
  }
  throw new CrewFault(
    'gateway_locked',
    `could not take ${path}: another gateway keeps taking it over; stop the other gateway or set CREW_HOME to another directory`,
  );
}

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
