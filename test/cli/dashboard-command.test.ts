import { describe, expect, it } from 'vitest';
import { browserOpener } from '../../src/cli/commands/dashboard.js';

describe('crew dashboard: opening the link', () => {
  const url = 'http://127.0.0.1:7878/login?code=abc';

  it('opens with the desktop’s own opener', () => {
    expect(browserOpener('darwin', {}, url)).toEqual(['open', url]);
    expect(browserOpener('linux', { DISPLAY: ':0' }, url)).toEqual(['xdg-open', url]);
    expect(browserOpener('linux', { WAYLAND_DISPLAY: 'wayland-0' }, url)).toEqual(['xdg-open', url]);
    expect(browserOpener('win32', {}, url)?.at(-1)).toBe(url);
  });

  it('a Linux box without a display (SSH, CI) only prints the link', () => {
    expect(browserOpener('linux', {}, url)).toBeUndefined();
  });
});
