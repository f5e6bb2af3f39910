import { describe, expect, it } from 'vitest';
import { createRunTracer } from '../../src/tracing/run-tracer.js';
import { currentTraceparent, validTraceparent, withTraceparent } from '../../src/tracing/trace-scope.js';

const GOOD = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('trace context from an MCP request', () => {
  it('keeps a well-formed version-00 traceparent and drops anything else', () => {
    expect(validTraceparent(GOOD)).toBe(GOOD);
    for (const bad of [
      undefined,
      42,
      '',
      GOOD.toUpperCase(),
      `${GOOD} `,
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      `${GOOD}-extra`,
      'x'.repeat(100_000),
    ])
      expect(validTraceparent(bad), String(bad).slice(0, 60)).toBeUndefined();
  });

  it('is visible inside the call that carried it, across awaits, and nowhere else', async () => {
    expect(currentTraceparent()).toBeUndefined();
    const seen = await withTraceparent(GOOD, async () => {
      await Promise.resolve();
      return currentTraceparent();
    });
    expect(seen).toBe(GOOD);
    expect(currentTraceparent()).toBeUndefined();
    expect(withTraceparent(undefined, () => currentTraceparent())).toBeUndefined();
  });

  it('without an OTLP endpoint there is no tracer (nothing is wired); OTEL_SDK_DISABLED turns it off too', async () => {
    const sources = {
      liveRun: () => undefined,
      store: { run: () => undefined },
      now: () => 0,
      version: 'test',
      log: () => undefined,
    };
    expect(await createRunTracer({}, sources)).toBeUndefined();
    expect(await createRunTracer({ OTEL_EXPORTER_OTLP_ENDPOINT: '' }, sources)).toBeUndefined();
    expect(
      await createRunTracer(
        { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' },
        sources,
      ),
    ).toBeUndefined();
  });
});
