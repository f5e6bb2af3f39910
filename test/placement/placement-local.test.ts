import { fakeWorld } from '../helpers/fake-gateway.js';
import { placementConformance } from './placement-conformance.js';

/** The local placement (every run here) keeps the contract the cluster placement keeps. */
placementConformance('the local placement', async () => {
  const world = fakeWorld({ cap: 2 });
  return {
    world,
    settle: (ms = 0) => world.clock.advance(ms),
    close: () => world.gateway.close(),
  };
});
