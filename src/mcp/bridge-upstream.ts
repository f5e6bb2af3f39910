import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { LoggingLevel, LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';
import { daemonUrl, readToken } from '../daemon/daemon-address.js';
import { CWD_HEADER, PARENT_HEADER } from './bridge-headers.js';
import { ensureDaemon } from './daemon-start.js';
import { SERVER_INFO } from './server-info.js';

export interface UpstreamOptions {
  crewHome: string;
  env: NodeJS.ProcessEnv;
  /** Sent with every request (`x-crew-cwd`): where the parent works. */
  cwd: string;
  /** Sent with every request (`x-crew-parent`): the parent's name, the same across bridges and daemons. */
  parent: () => Promise<string>;
  /** The daemon's logging notifications (completion events), passed on to the parent. */
  onNotification: (notification: LoggingMessageNotification) => void;
  log: (line: string) => void;
}

/**
 * The bridge's connection to the daemon: an MCP client over Streamable HTTP, opened in the background
 * (reaching the daemon, or starting one when none answers) while the bridge already answers what it can
 * alone. Whatever needs the daemon awaits `use`. One connection attempt at a time; a failed attempt is
 * forgotten, so the next call tries again. `close()` stops a start in progress.
 */
export class DaemonUpstream {
  private client: Promise<Client> | undefined;
  private readonly stopped = new AbortController();
  /** The parent's last `logging/setLevel`: each new session to the daemon is asked for it again. */
  private loggingLevel: LoggingLevel | undefined;

  constructor(private readonly options: UpstreamOptions) {}

  /** Starts reaching the daemon now (the bridge calls it as soon as it serves stdio). */
  connect(): Promise<Client> {
    if (this.stopped.signal.aborted) return Promise.reject(new Error('the bridge is closing'));
    if (this.client !== undefined) return this.client;
    const attempt = this.open();
    this.client = attempt;
    attempt.catch(() => {
      if (this.client === attempt) this.client = undefined;
    });
    return attempt;
  }

  /**
   * Runs `fn` on the daemon's client. When it fails with a protocol error (the daemon restarted and its
   * sessions are gone, or it died), reconnects once, starting a daemon if needed, and runs it again,
   * unless it had timed out: a call that ran too long is not repeated.
   */
  async use<T>(fn: (client: Client) => Promise<T>): Promise<T> {
    const first = await this.connect();
    try {
      return await fn(first);
    } catch (error) {
      if (this.client !== undefined && (await this.client.catch(() => undefined)) === first) {
        this.client = undefined;
        await first.close().catch(() => undefined);
      }
      const again = await this.connect();
      if (error instanceof Error && /timed out/i.test(error.message)) throw error;
      return fn(again);
    }
  }

  /**
   * `logging/setLevel`, kept for the connections to come: the daemon pushes completion events only to a
   * session that asked for them, and a reconnect (the daemon restarted, the session expired) opens a new one.
   */
  async setLoggingLevel(level: LoggingLevel): Promise<void> {
    this.loggingLevel = level;
    await this.use((c) => c.setLoggingLevel(level));
  }

  async close(): Promise<void> {
    this.stopped.abort();
    const client = await this.client?.catch(() => undefined);
    this.client = undefined;
    await client?.close().catch(() => undefined);
  }

  private async open(): Promise<Client> {
    const { crewHome, env } = this.options;
    const url = daemonUrl(crewHome, env);
    await ensureDaemon({ crewHome, env, url, signal: this.stopped.signal, log: this.options.log });
    const [{ Client }, { StreamableHTTPClientTransport }, { LoggingMessageNotificationSchema }] =
      await Promise.all([
        import('@modelcontextprotocol/sdk/client/index.js'),
        import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
        import('@modelcontextprotocol/sdk/types.js'),
      ]);
    const token = readToken(crewHome, env);
    const parent = await this.options.parent();
    const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: {
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          [PARENT_HEADER]: parent,
          [CWD_HEADER]: this.options.cwd,
        },
      },
    });
    const client = new Client({ name: 'crew-mcp-bridge', version: SERVER_INFO.version });
    await client.connect(transport);
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => this.options.onNotification(n));
    if (this.loggingLevel !== undefined) {
      try {
        await client.setLoggingLevel(this.loggingLevel);
      } catch (error) {
        await client.close().catch(() => undefined);
        throw error;
      }
    }
    if (this.stopped.signal.aborted) {
      await client.close().catch(() => undefined);
      // The bridge is closing: its caller is gone, so no tool result carries this.
      throw new Error('the bridge is closing');
    }
    return client;
  }
}
