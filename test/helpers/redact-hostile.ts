/**
 * Units that, repeated to 100 KB (the linear-time test, `test/core/redact.test.ts`) or 1 MB (the hostile
 * table of `bench/redact.bench.ts`), would make a backtracking pattern of the redaction table rescan:
 * one per row's prefix, separator or repeated part.
 */
export const HOSTILE_REDACT_UNITS: readonly (readonly [name: string, unit: string])[] = [
  ['a long word', 'a'],
  ['a long base64 run near aws', 'aws Ab1/'],
  ['repeated eyJ', 'eyJ'],
  ['dotted labels', 'a.'],
  ['repeated schemes', 'http://'],
  ['scheme-like chars', 'a+'],
  ['repeated sk-', 'sk-'],
  ['repeated keys', 'password='],
  ['chained labels', 'password: DB_PASSWORD:'],
  ['BEGIN lines without END', '-----BEGIN PRIVATE KEY-----'],
  ['bearer runs', 'Bearer '],
  ['authorization runs', 'Authorization: '],
  ['bot ids', '1234567890:AA'],
  ['mailgun prefixes', 'key-'],
  ['azure keys', 'AccountKey='],
  ['URL with a long path', 'https://x.example/'],
  ['spaces', ' '],
  // the rows of issue 28
  ['keys with no value before &', 'password=&pass=&!'],
  ['short keys', 'DB_PASS=pwd=_pat='],
  ['empty quoted values', '"token=" pwd=\' '],
  ['rotating Slack prefixes', 'xoxe.xoxp-1-'],
  ['refresh-token prefixes', '1//0'],
  ['Azure infixes', 'ab8Q~'],
  ['Twilio SIDs near the word', 'twilio AC0123456789abcdef0'],
  ['vault prefixes', 's.Ab1hvs.'],
  ['40-char keys, anywhere', 'Ab1/Cd2+Ef3/Gh4+Ij5/Kl6+Mn7/Op8+Qr9/St0+ '],
];

/**
 * Units in which nearly every repetition is a secret to mask: the cost is one replacement per unit, not
 * backtracking, so they are measured against the old detector in the bench, not against the one-pass
 * baseline of the linear-time test.
 */
export const MANY_SECRETS_UNITS: readonly (readonly [name: string, unit: string])[] = [
  ['ampersands in a value', 'password=a&'],
  ['values running on over &', 'pass=P@ss!&'],
  ['quoted assignments', '"token=ab'],
  // every second key is the quoted value of the one before (masked since issue 28), so this is a secret per
  // pair, not a rescan: timed against the linear baseline it failed once in four runs on a loaded machine
  ['quotes after keys', 'password="'],
  ['provider tokens', 'ghp_16C7e42F292c6912E7710c838347Ae178B4a '],
  ['40-char keys', 'l8BOuEesIYOI8SZ7zSL/QAJjd0/+vCYLKY73ey29 '],
];

/** `unit` repeated to `chars` chars. */
export function hostileText(unit: string, chars: number): string {
  return unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);
}
