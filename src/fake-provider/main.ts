#!/usr/bin/env node
import { startFakeProvider } from './fake-provider.js';

/**
 * `crew-fake-provider [--port N] [--reply TEXT]`: the scripted provider as a dev command, on 127.0.0.1.
 * Prints the base URL and the environment each CLI needs, then serves until SIGINT/SIGTERM. A prompt's
 * `#fake` lines choose each turn (see `src/fake-provider/script.ts`).
 */
function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const port = Number(argValue('--port') ?? 0);
const reply = argValue('--reply');
const provider = await startFakeProvider({ port, ...(reply !== undefined && { reply }) });
process.stdout.write(
  [
    `crew-fake-provider listening on ${provider.url}`,
    `  Claude:  ANTHROPIC_BASE_URL=${provider.url} ANTHROPIC_API_KEY=fake`,
    `  Codex:   a model provider with base_url = "${provider.url}/v1", wire_api = "responses"`,
    `  Gemini:  GOOGLE_GEMINI_BASE_URL=${provider.url} GEMINI_API_KEY=fake`,
    `  OpenAI-compatible (opencode): baseURL ${provider.url}/v1`,
    '',
  ].join('\n'),
);
const stop = () => {
  void provider.close().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
