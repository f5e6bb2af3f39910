/**
 * Whether a daemon answers at `url` (health check with a short timeout). The CLI and the stdio bridge both
 * ask before they start one; it lives here, below both, so the bridge imports nothing from the CLI.
 */
export async function isDaemonUp(url: string, token: string | undefined): Promise<boolean> {
  try {
    const response = await fetch(`${url}/api/health`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      signal: AbortSignal.timeout(1000),
    });
    return response.ok;
  } catch {
    return false;
  }
}
