/** What every CLI command gets: where Crew's files are and how to answer. Exit codes per DESIGN §6. */
export interface CliContext {
  crewHome: string;
  out(line: string): void;
  err(line: string): void;
  /** Exit 2: the command line was wrong. */
  usage(message: string): never;
  /** Exit 1: refused or failed. */
  fail(message: string): never;
  isTty: boolean;
}

export { EXIT } from './exit-codes.js';
