import { readFileSync } from 'node:fs';
import { request } from 'node:http';

export interface ChunkedAnswer {
  /** 0 when the connection ended before any answer. */
  status: number;
  text: string;
  /** Bytes of body the client got to write before the answer came (or the connection ended). */
  sent: number;
}

/**
 * Sends `totalBytes` of body with `Transfer-Encoding: chunked` (no Content-Length), `chunk` at a time,
 * and stops writing as soon as the answer starts: what a client that streams a huge body sees.
 */
export function sendChunked(
  url: string,
  options: { method: string; headers?: Record<string, string>; totalBytes: number; chunk?: Buffer },
): Promise<ChunkedAnswer> {
  const chunk = options.chunk ?? Buffer.alloc(64 * 1024, 0x20);
  return new Promise((resolve) => {
    let sent = 0;
    let answered = false;
    let settled = false;
    const settle = (answer: ChunkedAnswer) => {
      if (settled) return;
      settled = true;
      req.destroy();
      resolve(answer);
    };
    const req = request(url, {
      method: options.method,
      headers: { 'transfer-encoding': 'chunked', ...options.headers },
    });
    req.on('response', (res) => {
      answered = true;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        if (text.length < 1_000_000) text += d;
      });
      res.on('end', () => settle({ status: res.statusCode ?? 0, text, sent }));
      res.on('error', () => settle({ status: res.statusCode ?? 0, text, sent }));
    });
    req.on('error', () => settle({ status: 0, text: '', sent }));
    const pump = () => {
      while (!answered && !req.destroyed && sent < options.totalBytes) {
        const part = chunk.subarray(0, Math.min(chunk.length, options.totalBytes - sent));
        sent += part.length;
        if (!req.write(part)) {
          req.once('drain', pump);
          return;
        }
      }
      if (!answered && !req.destroyed && sent >= options.totalBytes) req.end();
    };
    pump();
  });
}

/** A process's resident set in bytes (Linux `/proc`). */
export function rssOf(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? 0) * 1024;
}

/** Samples `pid`'s RSS every 20 ms while `work` runs; resolves with the work's value and the peak seen. */
export async function peakRssDuring<T>(
  pid: number,
  work: () => Promise<T>,
): Promise<{ value: T; peak: number }> {
  let peak = rssOf(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, rssOf(pid));
  }, 20);
  try {
    const value = await work();
    peak = Math.max(peak, rssOf(pid));
    return { value, peak };
  } finally {
    clearInterval(timer);
  }
}
