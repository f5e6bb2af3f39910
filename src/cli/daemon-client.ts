import { CrewError, CrewFault, type Refusal, refuse } from '../core/errors.js';
import { daemonUrl, readToken } from '../daemon/daemon-address.js';

/** No daemon answered: the CLI exits 3. */
export function daemonUnreachable(url: string, cause: string): CrewFault {
  return new CrewFault(
    'daemon_unreachable',
    `no Crew daemon answers at ${url} (${cause}); start one with \`crew serve\``,
    { url },
  );
}

export interface DaemonClient {
  url: string;
  call<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<T & { ok: boolean; refusal?: Refusal }>;
}

export function daemonClient(crewHome: string, env: NodeJS.ProcessEnv): DaemonClient {
  const url = daemonUrl(crewHome, env);
  return {
    url,
    async call(method, path, body) {
      const token = readToken(crewHome, env);
      let response: Response;
      try {
        response = await fetch(`${url}${path}`, {
          method,
          headers: {
            ...(token ? { authorization: `Bearer ${token}` } : {}),
            ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
          signal: AbortSignal.timeout(70_000),
        });
      } catch (error) {
        throw daemonUnreachable(
          url,
          (error as Error & { cause?: { code?: string } }).cause?.code ?? (error as Error).message,
        );
      }
      const text = await response.text();
      try {
        return JSON.parse(text);
      } catch {
        throw new CrewError(
          refuse(
            'invalid_argument',
            `the daemon answered ${response.status} without JSON: ${text.slice(0, 200)}`,
          ),
        );
      }
    },
  };
}
