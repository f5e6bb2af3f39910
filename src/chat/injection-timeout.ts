/**
 * One injection attempt's bound (DESIGN §4): `CREW_INJECTION_TIMEOUT` seconds (default 900), clamped to
 * `agent.subagent_delivery_timeout_secs`; the relay bounds each push to a sink by the same value. Pure.
 */
export function injectionTimeoutMs(env: NodeJS.ProcessEnv, deliveryTimeoutSecs: number): number {
  const raw = Number(env.CREW_INJECTION_TIMEOUT ?? 900);
  const secs = Number.isFinite(raw) && raw > 0 ? raw : 900;
  return Math.min(secs, deliveryTimeoutSecs) * 1000;
}
