import {
  continueConversations,
  failedAdmissions,
  spawnNested,
  spawnSingles,
  spawnWaves,
} from './admission-moves.js';
import type { Move, MoveContext, MoveKind } from './move.js';
import { cancelRuns, releaseConversations, steerRuns } from './operator-moves.js';
import { restartGateway } from './restart-move.js';
import { confirmStops, endRuns, startRuns, tickToWake, toolCalls } from './runner-moves.js';
import type { World } from './world.js';

/**
 * Every kind of event the explorer interleaves. A new event kind is one more entry: a function that
 * lists its moves in a state, each applying one event and judging the reply.
 */
export const MOVE_KINDS: readonly MoveKind[] = [
  spawnSingles,
  spawnWaves,
  spawnNested,
  continueConversations,
  failedAdmissions,
  startRuns,
  endRuns,
  confirmStops,
  tickToWake,
  toolCalls,
  cancelRuns,
  steerRuns,
  releaseConversations,
  restartGateway,
];

export function movesOf(world: World, context: MoveContext): Move[] {
  return context.kinds.flatMap((kind) => kind(world, context));
}
