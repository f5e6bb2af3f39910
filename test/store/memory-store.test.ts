import { MemoryStore } from '../../src/store/memory-store.js';
import { storeConformance } from './store-conformance.js';

storeConformance('MemoryStore', () => {
  const store = new MemoryStore();
  return { store, cleanup: () => store.close() };
});
