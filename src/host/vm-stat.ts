/**
 * Reads the output of a long-lived `vm_stat <secs>` (macOS): a banner with the page size, a header
 * of column names, then one row of page counts per interval (banner and header repeat every 21 rows).
 * Wide numbers are abbreviated with K, M or G (powers of 1000). Fed text in chunks, it answers the
 * available bytes of each complete row: free + inactive + speculative + purgeable pages × page size.
 */
export class VmStatParser {
  private pageSizeBytes: number | undefined;
  private columns: string[] | undefined;
  private partial = '';

  /** Feeds output; returns the available bytes of the last complete row in it, if any. */
  feed(chunk: string): number | undefined {
    const text = this.partial + chunk;
    const lines = text.split('\n');
    this.partial = lines.pop() ?? '';
    let latest: number | undefined;
    for (const line of lines) {
      const bytes = this.line(line);
      if (bytes !== undefined) latest = bytes;
    }
    return latest;
  }

  private line(line: string): number | undefined {
    const banner = /page size of (\d+) bytes/.exec(line);
    if (banner) {
      this.pageSizeBytes = Number(banner[1]);
      return undefined;
    }
    const tokens = line.trim().split(/\s+/);
    if (tokens.includes('free')) {
      this.columns = tokens;
      return undefined;
    }
    if (this.columns === undefined || this.pageSizeBytes === undefined) return undefined;
    const values = tokens.map(parseCount);
    if (values.length !== this.columns.length || values.some((v) => v === undefined)) return undefined;
    const column = (...names: string[]): number | undefined => {
      for (const name of names) {
        const index = this.columns?.indexOf(name) ?? -1;
        if (index >= 0) return values[index];
      }
      return undefined;
    };
    const free = column('free');
    const inactive = column('inactive', 'inact');
    if (free === undefined || inactive === undefined) return undefined;
    // Older releases print `spec` and have no purgeable column; absent counts as none.
    const pages = free + inactive + (column('specul', 'spec') ?? 0) + (column('prgable') ?? 0);
    return pages * this.pageSizeBytes;
  }
}

/** A count as `vm_stat` prints it: `12345`, `1234K`, `12M`, `1G` (powers of 1000). */
export function parseCount(token: string): number | undefined {
  const match = /^(\d+)([KMG]?)$/.exec(token);
  if (!match) return undefined;
  const scale = match[2] === 'K' ? 1e3 : match[2] === 'M' ? 1e6 : match[2] === 'G' ? 1e9 : 1;
  return Number(match[1]) * scale;
}
