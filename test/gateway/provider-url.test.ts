import { describe, expect, it } from 'vitest';
import { withProviderUrl } from '../../src/gateway/provider-feed.js';

describe('{provider_base_url} in an agent command', () => {
  const command = ['codex-acp', '--config=openai_base_url="{provider_base_url}"', '--flag'];

  it("is filled with the run's gateway URL", () => {
    expect(withProviderUrl(command, 'http://127.0.0.1:9/p/tok/openai')).toEqual([
      'codex-acp',
      '--config=openai_base_url="http://127.0.0.1:9/p/tok/openai"',
      '--flag',
    ]);
  });

  it('drops the argument that names it when there is no gateway URL, so the CLI keeps its own setting', () => {
    expect(withProviderUrl(command, undefined)).toEqual(['codex-acp', '--flag']);
    expect(withProviderUrl(['a', 'b'], undefined)).toEqual(['a', 'b']);
  });

  it('leaves a command that does not name it as it is, in a copy of its own', () => {
    const plain = ['claude-code-acp', '--verbose'];
    const filled = withProviderUrl(plain, 'http://127.0.0.1:9/p/tok/anthropic');
    expect(filled).toEqual(['claude-code-acp', '--verbose']);
    expect(filled).not.toBe(plain);
  });
});
