import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DeliveredEvent, Sink } from '../../src/gateway/sink.js';

/** One sink as the suite drives it, with a view of what its parent has received. */
export interface SinkUnderTest {
  sink: Sink;
  /** Waits for a delivery to settle, driving whatever the sink waits on (a fake clock, a pump). */
  settle<T>(delivery: Promise<T>): Promise<T>;
  /** The ids of the events the parent has received so far, in order, once per time it was shown. */
  received(): Promise<string[]>;
  close(): Promise<void>;
}

/** An event for `parent` whose text names its id (so a sink that shows only text can be read back). */
export function eventFor(parent: string, id: string): DeliveredEvent {
  return {
    id,
    parent,
    kind: 'completion',
    run_ids: [`run-${id}`],
    text: `[Subagent completion event] event=${id}`,
  };
}

/** The event ids named in `text`, in order (see {@link eventFor}). */
export function idsIn(text: string): string[] {
  return [...text.matchAll(/event=(\w+)/g)].map((m) => m[1] as string);
}

/**
 * The {@link Sink} contract (src/gateway/sink.ts), one suite every sink passes: a delivered event reaches
 * the parent once, a second hand-over of it (the relay's retry after a first attempt that did land) shows
 * nothing new, and events handed over in turn arrive in that order.
 */
export function sinkConformance(name: string, make: (parent: string) => Promise<SinkUnderTest>): void {
  describe(`${name} keeps the Sink contract`, () => {
    let under: SinkUnderTest;
    const parent = `conformance:${name}`;
    beforeEach(async () => {
      under = await make(parent);
    });
    afterEach(async () => {
      await under.close();
    });

    it('an event it resolved for is held by the parent, once', async () => {
      expect(await under.received()).toEqual([]);
      await under.settle(under.sink.deliver(eventFor(parent, 'e1')));
      expect(await under.received()).toEqual(['e1']);
    });

    it('the same event handed over again (a retry after a timeout) reaches the parent no second time', async () => {
      await under.settle(under.sink.deliver(eventFor(parent, 'e1')));
      await under.settle(under.sink.deliver(eventFor(parent, 'e1')));
      await under.settle(under.sink.deliver(eventFor(parent, 'e2')));
      await under.settle(under.sink.deliver(eventFor(parent, 'e1')));
      expect(await under.received()).toEqual(['e1', 'e2']);
    });

    it('events handed over one after another arrive in that order', async () => {
      for (const id of ['a1', 'a2', 'a3']) await under.settle(under.sink.deliver(eventFor(parent, id)));
      expect(await under.received()).toEqual(['a1', 'a2', 'a3']);
    });
  });
}
