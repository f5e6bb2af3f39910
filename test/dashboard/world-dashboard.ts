import { Dashboard, type DashboardDeps } from '../../src/dashboard/dashboard.js';
import { toRunView } from '../../src/gateway/run-view.js';
import type { FakeWorld } from '../helpers/fake-gateway.js';

/** A dashboard over a fake world's gateway and store, with the defaults these tests share; `deps` overrides. */
export function worldDashboard(world: FakeWorld, deps: Partial<DashboardDeps> = {}): Dashboard {
  return new Dashboard({
    gateway: world.gateway,
    viewsOf: (ids) => world.store.runs({ ids: [...ids], limit: ids.length }).map(toRunView),
    resources: () => ({ cap: 3 }),
    selPath: '/nonexistent/security_events.jsonl',
    clock: world.clock,
    readOnly: false,
    historyMax: 1000,
    queueBounds: { singles: 32, waveMembers: 5000 },
    ...deps,
  });
}
