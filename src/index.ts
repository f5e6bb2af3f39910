export { FakeClock } from './clock/fake-clock.js';
export { realClock } from './clock/real-clock.js';
export type { Clock } from './core/clock.js';
export {
  CONFIG_KEYS,
  type ConfigKey,
  type CrewConfig,
  defaultConfig,
  parseConfig,
} from './core/config-schema.js';
export { CrewError, REFUSAL_CODES, type Refusal, type RefusalCode } from './core/errors.js';
export type * from './core/types.js';
