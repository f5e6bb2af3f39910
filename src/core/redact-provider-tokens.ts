/**
 * Rows of the redaction table for provider tokens the second red team found unmasked (issue 28): each a
 * fixed prefix (or a fixed infix) and a length, so a failed attempt costs one token at most. Their place
 * in the table is set in `redact.ts` (after the older provider rows, before bare Bearer tokens and
 * assignments).
 */
import { isMixedCaseWithDigit, mask, type SecretShape, whole } from './secret-shape.js';

export const PROVIDER_TOKEN_SHAPES: readonly SecretShape[] = [
  {
    name: 'Slack app-level and rotating tokens (xapp-, xoxe.xox?-, xoxe-)',
    pattern: /(?<![A-Za-z0-9_-])(?:xapp-\d-|xoxe\.xox[a-z]-|xoxe-\d-)[A-Za-z0-9-]{10,4096}/g,
    hints: ['xapp-', 'xoxe'],
    replace: whole('slack_token'),
    redacts: [
      [
        'app token xapp-1-A0123456789-1234567890123-0123456789abcdef0123456789abcdef',
        'app token [REDACTED:slack_token]',
      ],
      [
        'refresh xoxe.xoxp-1-Mi0yLTEyMzQ1Njc4OTAtMTIzNDU2Nzg5MDEyMy0xMjM0NTY3ODkw ok',
        'refresh [REDACTED:slack_token] ok',
      ],
      ['rotate xoxe-1-My0xLTEyMzQ1Njc4OTAxMi0xMjM0NTY3ODkwMTIz', 'rotate [REDACTED:slack_token]'],
    ],
    keeps: ['the xapp- prefix and xapp-config; xoxe. is the refresh prefix'],
  },
  {
    name: 'GitLab deploy, runner and other tokens (gldt-, glrt-, glptt-, glsoat-, glcbt-, glft-, glimt-)',
    pattern: /(?<![A-Za-z0-9_-])gl(?:dt|rt|ptt|soat|cbt|ft|imt|agent)-[A-Za-z0-9_-]{20,4096}/g,
    hints: ['gl'],
    replace: whole('gitlab_token'),
    redacts: [
      ['deploy with gldt-G078gzCYU4MBywnxt8Lt', 'deploy with [REDACTED:gitlab_token]'],
      ['register glrt-2CR8_eVxiioB1QmzPZwa now', 'register [REDACTED:gitlab_token] now'],
    ],
    keeps: ['gldt-short and glrt-runner-tag'],
  },
  {
    name: 'Stripe webhook signing secret (whsec_)',
    pattern: /(?<![A-Za-z0-9_])whsec_[A-Za-z0-9]{24,4096}/g,
    hints: ['whsec_'],
    replace: whole('stripe_key'),
    redacts: [['STRIPE whsec_l9QctBa0K7mXlYOVlbvl29ArVetEHMc9', 'STRIPE [REDACTED:stripe_key]']],
    keeps: ['the whsec_ prefix marks a webhook secret'],
  },
  {
    name: 'Google OAuth refresh token (1//0 + 30+)',
    pattern: /(?<![A-Za-z0-9_/:.-])1\/\/0[A-Za-z0-9_-]{30,4096}/g,
    hints: ['1//0'],
    replace: whole('google_oauth_token'),
    redacts: [
      [
        'refresh_with 1//0Gqv60IogZfYnFs40QFKMZIUrFmVAlDbATJmObDoOjxHJlKCUfYgvYaN3z7QD done',
        'refresh_with [REDACTED:google_oauth_token] done',
      ],
    ],
    keeps: ['python: 1//0 raises ZeroDivisionError and 1//02'],
  },
  {
    name: 'Azure AD client secret (3 chars, a digit, Q~, 31–34 chars)',
    pattern: /(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])/g,
    hints: ['Q~'],
    replace: whole('azure_key'),
    redacts: [
      ['client secret WeZ8Q~DI2BolReJaOaNK1Pp2EV0c0TvK5ELLk here', 'client secret [REDACTED:azure_key] here'],
    ],
    keeps: ['version 1.8Q~alpha and abc8Q~short'],
  },
  {
    name: 'Twilio account SID or API key SID (AC/SK + 32 hex)',
    pattern: /(?<![A-Za-z0-9])(?:AC|SK)[0-9a-f]{32}(?![A-Za-z0-9])/g,
    hints: ['AC', 'SK'],
    replace: whole('twilio_key'),
    redacts: [['api key SK770b2bd51b704df141c9ccda5384056e', 'api key [REDACTED:twilio_key]']],
    keeps: ['ACCOUNT AC0123 and SKU-0123456789 in the catalogue'],
  },
  {
    name: 'Twilio auth token or API secret (32 chars, near an account SID or the word Twilio)',
    // 32 hex is also an MD5 or a UUID without dashes: only where the text is about Twilio.
    pattern: /(?<![A-Za-z0-9_-])[A-Za-z0-9]{32}(?![A-Za-z0-9_-])/g,
    onlyIn: 'twilio',
    replace: (match) => (isTwilioSecret(match) ? mask('twilio_token') : match),
    redacts: [
      [
        'twilio AC0123456789abcdef0123456789abcdef with 9f86d081884c7d659a2feaa0c55ad015',
        'twilio [REDACTED:twilio_key] with [REDACTED:twilio_token]',
      ],
      [
        'sid AC0123456789abcdef0123456789abcdef auth 9f86d081884c7d659a2feaa0c55ad015',
        'sid [REDACTED:twilio_key] auth [REDACTED:twilio_token]',
      ],
    ],
    keeps: [
      'md5 d41d8cd98f00b204e9800998ecf8427e of the empty file',
      'twilio docs: callbackUrlForIncomingMessages',
    ],
  },
  {
    name: 'Shopify token (shpat_/shpss_/shpca_/shppa_ + 32 hex)',
    pattern: /(?<![A-Za-z0-9_])shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}(?![A-Za-z0-9])/g,
    hints: ['shp'],
    replace: whole('shopify_token'),
    redacts: [
      ['shop 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', 'shop [REDACTED:shopify_token]'],
      ['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', '[REDACTED:shopify_token]'],
      ['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', '[REDACTED:shopify_token]'],
      ['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', '[REDACTED:shopify_token]'],
    ],
    keeps: ['shpat_ tokens and shpss_short'],
  },
  {
    name: 'PyPI API token (pypi-AgEIcHlwaS5vcmc + 50+)',
    pattern: /(?<![A-Za-z0-9_-])pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,4096}/g,
    hints: ['pypi-'],
    replace: whole('pypi_token'),
    redacts: [
      [
        'twine upload -p pypi-AgEIcHlwaS5vcmcCJGE0ZjI5NzQ4LTc2ZGEtNDBiZi1hMzM4LTk0MDQ2NDQxNDRjYQACKlszLCJjZmYyNTk1YyJdAAAGIEVm',
        'twine upload -p [REDACTED:pypi_token]',
      ],
    ],
    keeps: ['pip install pypiserver; the pypi-AgEIcHlwaS5vcmc prefix'],
  },
  {
    name: 'DigitalOcean token (dop_v1_/doo_v1_/dor_v1_ + 64 hex)',
    pattern: /(?<![A-Za-z0-9_])do[opr]_v1_[a-f0-9]{64}(?![A-Za-z0-9])/g,
    hints: ['_v1_'],
    replace: whole('digitalocean_token'),
    redacts: [
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
    ],
    keeps: ['dop_v1_ tokens start so; dop_v1_abc'],
  },
  {
    name: 'Vault service and batch token (hvs./hvb. + 24+)',
    pattern: /(?<![A-Za-z0-9_.-])hv[sb]\.[A-Za-z0-9_-]{24,4096}/g,
    hints: ['hvs.', 'hvb.'],
    replace: whole('vault_token'),
    redacts: [
      [
        'VAULT hvs.kZqQUeRQo3N88HadzEY6clJjrFWSGF71kPMbZjmL9wJ80jAyEBr8dsKYVAVizzEu4qJAI9WWP2y1o0y4xilqHCgYlO',
        'VAULT [REDACTED:vault_token]',
      ],
      ['batch hvb.AAAAAQJkZqQUeRQo3N88HadzEY6clJjrFWSGF71k', 'batch [REDACTED:vault_token]'],
    ],
    keeps: ['hvs.short and hvb.x'],
  },
  {
    name: 'Vault legacy service token (s. + exactly 24, mixed case and a digit)',
    // `s.` alone is everywhere in code (`s.length`): only a lone `s.` and exactly 24 random-looking chars.
    pattern: /(?<![A-Za-z0-9_.$-])s\.[A-Za-z0-9]{24}(?![A-Za-z0-9_.(-])/g,
    hints: ['s.'],
    replace: (match) => (isMixedCaseWithDigit(match.slice(2)) ? mask('vault_token') : match),
    redacts: [['vault login s.x1V7FuZzLIa8epEUHqYfvtg0', 'vault login [REDACTED:vault_token]']],
    keeps: ['s.toString() and this.s.getElementsByTagName and s.AbcdefghijklmnopqrstuvwX'],
  },
  {
    name: 'Docker Hub token (dckr_pat_/dckr_oat_ + 20+)',
    pattern: /(?<![A-Za-z0-9_])dckr_(?:pat|oat)_[A-Za-z0-9_-]{20,4096}/g,
    hints: ['dckr_'],
    replace: whole('docker_token'),
    redacts: [
      ['docker login -p dckr_pat_bG8bt6TM2ni3VVpvVlmPeX6z5Ke', 'docker login -p [REDACTED:docker_token]'],
    ],
    keeps: ['the dckr_pat_ prefix'],
  },
];

/** An auth token is 32 lower-case hex; an API key's secret 32 letters and digits of both cases. */
function isTwilioSecret(token: string): boolean {
  return (
    (/^[0-9a-f]+$/.test(token) && /\d/.test(token) && /[a-f]/.test(token)) || isMixedCaseWithDigit(token)
  );
}
