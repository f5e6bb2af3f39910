import { randomBytes } from 'node:crypto';

/** Id sources. Run ids are short, unique across gateway starts (a random prefix) and sortable within one. */
export interface Ids {
  run(): string;
  batch(): string;
  event(): string;
}

export function createIds(): Ids {
  const prefix = randomBytes(4).toString('hex');
  let n = 0;
  const next = (kind: string) => `${kind}${prefix}${(n++).toString(36).padStart(4, '0')}`;
  return { run: () => next('r'), batch: () => next('w'), event: () => next('e') };
}
