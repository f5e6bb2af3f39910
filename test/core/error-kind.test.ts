import { describe, expect, it } from 'vitest';
import { classifyRpcError, kindFromText } from '../../src/core/error-kind.js';

describe('error_kind from an agent error', () => {
  it('reads claude-agent-acp errorKind from error.data', () => {
    expect(
      classifyRpcError({ code: -32603, message: 'Internal error', data: { errorKind: 'rate_limit' } }),
    ).toBe('provider_rate_limited');
    expect(
      classifyRpcError({
        code: -32603,
        message: 'x',
        data: { errorKind: 'server_error', message: 'Overloaded' },
      }),
    ).toBe('provider_overloaded');
    expect(classifyRpcError({ code: -32603, message: 'x', data: { errorKind: 'server_error' } })).toBe(
      'provider_error',
    );
  });

  it("reads codex-acp's codex_error_info http_status_code", () => {
    const data = { codex_error_info: { response_stream_disconnected: { http_status_code: 429 } } };
    expect(classifyRpcError({ code: -32603, message: 'stream error', data })).toBe('provider_rate_limited');
    const overloaded = { codex_error_info: { http_connection_failed: { http_status_code: 503 } } };
    expect(classifyRpcError({ code: -32603, message: 'x', data: overloaded })).toBe('provider_overloaded');
    expect(
      classifyRpcError({ code: -32603, message: 'x', data: { codex_error_info: 'usage_limit_exceeded' } }),
    ).toBe('provider_error');
  });

  it('auth, protocol, and the message as a last resort', () => {
    expect(classifyRpcError({ code: -32000, message: 'Authentication required' })).toBe('auth_required');
    expect(classifyRpcError({ code: -32601, message: 'Method not found' })).toBe('agent_protocol_error');
    expect(classifyRpcError({ code: -32603, message: 'status 429 Too Many Requests' })).toBe(
      'provider_rate_limited',
    );
    expect(classifyRpcError({ code: 500, message: 'fetch failed' })).toBe('provider_error');
    expect(kindFromText('the model is overloaded')).toBe('provider_overloaded');
    expect(kindFromText('nothing to see')).toBeUndefined();
  });
});
