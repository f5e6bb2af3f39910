/**
 * The secret shapes the second red team (issue 28) found unmasked, each as a task would carry it, and the
 * near misses around them that must stay as they are. Written apart from the table (SECRET_SHAPES), so
 * it proves the table covers them rather than restating it.
 */
export const RED_TEAM_MASKED: readonly (readonly [input: string, expected: string])[] = [
  // quoted and unknown assignments
  [
    'run "mysql -u root password=hunter2" on the box',
    'run "mysql -u root password=[REDACTED:secret]" on the box',
  ],
  ['DB_PASS=hunter2 npm start', 'DB_PASS=[REDACTED:secret] npm start'],
  ['export MYSQL_PWD=s3cr3t-Pw', 'export MYSQL_PWD=[REDACTED:secret]'],
  ['login with pwd=hunter2', 'login with pwd=[REDACTED:secret]'],
  ["curl -d 'token=abc123def456' http://127.0.0.1/x", "curl -d 'token=[REDACTED:secret]' http://127.0.0.1/x"],
  ['{"cmd": "token=Zm9vYmFyYmF6"}', '{"cmd": "token=[REDACTED:secret]"}'],
  ['password=Tr0ub&dor!x then go', 'password=[REDACTED:secret] then go'],
  ['pass=P@ss!w0rd&more9 ok', 'pass=[REDACTED:secret] ok'],
  ['{"password": "it\'s-a-secret"}', '{"password": "[REDACTED:secret]"}'],
  [
    'AZURE_DEVOPS_EXT_PAT=q5hqibzbjrvh3seetakzwtdngea6bv7zqetr7n3hihwjrrfnlela az devops login',
    'AZURE_DEVOPS_EXT_PAT=[REDACTED:secret] az devops login',
  ],
  // Slack
  [
    'app token xapp-1-A0123456789-1234567890123-0123456789abcdef0123456789abcdef',
    'app token [REDACTED:slack_token]',
  ],
  [
    'refresh xoxe.xoxp-1-Mi0yLTEyMzQ1Njc4OTAtMTIzNDU2Nzg5MDEyMy0xMjM0NTY3ODkw ok',
    'refresh [REDACTED:slack_token] ok',
  ],
  ['rotate xoxe-1-My0xLTEyMzQ1Njc4OTAxMi0xMjM0NTY3ODkwMTIz', 'rotate [REDACTED:slack_token]'],
  // GitLab
  ['deploy with gldt-G078gzCYU4MBywnxt8Lt', 'deploy with [REDACTED:gitlab_token]'],
  ['register glrt-2CR8_eVxiioB1QmzPZwa now', 'register [REDACTED:gitlab_token] now'],
  // Stripe webhook secret
  ['STRIPE whsec_l9QctBa0K7mXlYOVlbvl29ArVetEHMc9', 'STRIPE [REDACTED:stripe_key]'],
  // Google refresh token
  [
    'refresh_with 1//0Gqv60IogZfYnFs40QFKMZIUrFmVAlDbATJmObDoOjxHJlKCUfYgvYaN3z7QD done',
    'refresh_with [REDACTED:google_oauth_token] done',
  ],
  // Azure AD client secret
  ['client secret WeZ8Q~DI2BolReJaOaNK1Pp2EV0c0TvK5ELLk here', 'client secret [REDACTED:azure_key] here'],
  // Twilio: account SID with its auth token, and an API key SID
  [
    'twilio AC0123456789abcdef0123456789abcdef with 9f86d081884c7d659a2feaa0c55ad015',
    'twilio [REDACTED:twilio_key] with [REDACTED:twilio_token]',
  ],
  [
    'sid AC0123456789abcdef0123456789abcdef auth 9f86d081884c7d659a2feaa0c55ad015',
    'sid [REDACTED:twilio_key] auth [REDACTED:twilio_token]',
  ],
  ['api key SK770b2bd51b704df141c9ccda5384056e', 'api key [REDACTED:twilio_key]'],
  // Shopify
  ['shop 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', 'shop [REDACTED:shopify_token]'],
  ['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', '[REDACTED:shopify_token]'],
  ['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', '[REDACTED:shopify_token]'],
  ['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', '[REDACTED:shopify_token]'],
  // PyPI
  [
    'twine upload -p pypi-AgEIcHlwaS5vcmcCJGE0ZjI5NzQ4LTc2ZGEtNDBiZi1hMzM4LTk0MDQ2NDQxNDRjYQACKlszLCJjZmYyNTk1YyJdAAAGIEVm',
    'twine upload -p [REDACTED:pypi_token]',
  ],
  // DigitalOcean
  [
    'doctl auth init -t dop_v1_f1a3814340098b2184602ac8e8690fe0929d16f400f110a29d7718cc9633d546',
    'doctl auth init -t [REDACTED:digitalocean_token]',
  ],
  [
    'doo_v1_f1a3814340098b2184602ac8e8690fe0929d16f400f110a29d7718cc9633d546',
    '[REDACTED:digitalocean_token]',
  ],
  [
    'dor_v1_f1a3814340098b2184602ac8e8690fe0929d16f400f110a29d7718cc9633d546',
    '[REDACTED:digitalocean_token]',
  ],
  // Vault
  [
    'VAULT hvs.kZqQUeRQo3N88HadzEY6clJjrFWSGF71kPMbZjmL9wJ80jAyEBr8dsKYVAVizzEu4qJAI9WWP2y1o0y4xilqHCgYlO',
    'VAULT [REDACTED:vault_token]',
  ],
  ['batch hvb.AAAAAQJkZqQUeRQo3N88HadzEY6clJjrFWSGF71k', 'batch [REDACTED:vault_token]'],
  ['vault login s.x1V7FuZzLIa8epEUHqYfvtg0', 'vault login [REDACTED:vault_token]'],
  // Docker Hub
  ['docker login -p dckr_pat_bG8bt6TM2ni3VVpvVlmPeX6z5Ke', 'docker login -p [REDACTED:docker_token]'],
  // a bare AWS secret access key, with no AWS word or key id anywhere in the task
  ['use l8BOuEesIYOI8SZ7zSL/QAJjd0/+vCYLKY73ey29 for the bucket', 'use [REDACTED:aws_secret] for the bucket'],
  ['creds: pR4mXz9qTb2LwYc7NvK0hJ5sDg8FeA1uZiO3tWyB', 'creds: [REDACTED:aws_secret]'],
];

/** Near misses: each looks like one of the shapes above and is not a secret. */
export const RED_TEAM_KEPT: readonly string[] = [
  'git revert 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 and push',
  'GIT 9FCEB02D0AE598E95DC970B74767F19372D61AF8 is the commit',
  'run 550e8400-e29b-41d4-a716-446655440000 and run 550e8400e29b41d4a716446655440000',
  'the password is in the vault; ask for the token in the channel',
  'curl "https://api.example.com/items?token=&page=2"',
  'set token= and retry',
  'cd to PWD=/home/alice/project first',
  'tests: pass: 12, fail: 0, pass=12',
  'bypass=true compass=north passes=3',
  'the pat=pattern matcher',
  'the xapp- prefix and xapp-config; xoxe. is the refresh prefix',
  'gldt-short and glrt-runner-tag',
  'the whsec_ prefix marks a webhook secret',
  'python: 1//0 raises ZeroDivisionError and 1//02',
  'version 1.8Q~alpha and abc8Q~short',
  'ACCOUNT AC0123 and SKU-0123456789 in the catalogue',
  'md5 d41d8cd98f00b204e9800998ecf8427e of the empty file',
  'shpat_ tokens and shpss_short',
  'pip install pypiserver; the pypi-AgEIcHlwaS5vcmc prefix',
  'dop_v1_ tokens start so; dop_v1_abc',
  's.toString() and this.s.getElementsByTagName and s.AbcdefghijklmnopqrstuvwX',
  'hvs.short and hvb.x',
  'the dckr_pat_ prefix',
  'see app/controllers/Api/V1/UsersController2x for it',
  'component src/components/Header2/NavigationBarItems here',
  'the long name ThisIsAVeryLongClassNameWithNumbers1234x here',
  'sha1 base64 2jmj7l5rSw0yVb/vlWAYkK/YBwk= of empty',
];
