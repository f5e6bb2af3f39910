import { z } from 'zod';

/** `spawn_merge`'s arguments: one run (`agent_id`) or a wave (`batch_id`), and the branch to merge into. */
export const mergeArgsSchema = z
  .object({
    agent_id: z.string().min(1).max(256).optional(),
    batch_id: z.string().min(1).max(256).optional(),
    target: z.string().min(1).max(256),
  })
  .strict()
  .refine((a) => (a.agent_id === undefined) !== (a.batch_id === undefined), {
    message: 'give exactly one of agent_id or batch_id',
    path: ['agent_id'],
  });

export type MergeArgs = z.output<typeof mergeArgsSchema>;
