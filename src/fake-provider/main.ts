#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { parsePortArg } from '../cli/listen-args.js';
import { startFakeProvider } from './fake-provider.js';

/**
 * `crew-fake-provider [--port N] [--reply TEXT]`: the scripted provider as a dev command, on 127.0.0.1.
 * Prints the base URL and the environment each CLI needs, then serves until SIGINT/SIGTERM. A prompt's
 * `#fake` lines choose each turn (see `src/fake-provider/script.ts`).
 */
const USAGE = `usage: crew-fake-provider [--port N] [--reply TEXT]
  A scripted model provider on 127.0.0.1 (Anthropic, OpenAI and Gemini wire formats) for running real
  agent CLIs with no provider: it prints the base URL and each CLI's environment, then serves until
  Ctrl-C. A prompt's "#fake" lines script each turn.
  --port N      port to listen on (default 0: any free port)
  --reply TEXT  the answer when a prompt scripts none
  -h, --help    print this and exit
`;

function usageError(message: string): never {
  process.stderr.write(`crew-fake-provider: ${message}\n${USAGE}`);
  process.exit(2);
}

let values: { port?: string; reply?: string; help?: boolean };
try {
  ({ values } = parseArgs({
    options: { port: { type: 'string' }, reply: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
  }));
} catch (error) {
  // node:util's messages name the option; said in this command's words.
  const message = (error as Error).message;
  const unknown = /Unknown option '([^']+)'/.exec(message);
  const missing = /Option '(?:-\w, )?(--\w+) <value>' argument missing/.exec(message);
  usageError(unknown ? `unknown option ${unknown[1]}` : missing ? `${missing[1]} needs a value` : message);
}
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const port = parsePortArg(values.port ?? '0');
if (typeof port === 'string') usageError(port);
const provider = await startFakeProvider({
  port,
  ...(values.reply !== undefined && { reply: values.reply }),
});
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
