import { exploreHalf } from './explorer/report.js';

/** The second half of the bounded exhaustive exploration (scheduler-explorer.test.ts holds the first). */
exploreHalf(0, 'bounded exhaustive exploration of the admission core (DESIGN §3), second half');
