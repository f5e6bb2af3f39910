import { type Browser, chromium, type Page } from 'playwright-core';

/** Debian's chromium, which the dashboard's browser tests drive through playwright-core. */
export const CHROMIUM = '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
}

/** What a test's pages did that they must not: a request off 127.0.0.1, a console error or an uncaught one. */
export interface PageFaults {
  offHost: string[];
  consoleErrors: string[];
}

/** Records into `faults` every request of `page` that leaves 127.0.0.1 and every error it logs or throws. */
export function watchPage(page: Page, faults: PageFaults): void {
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.protocol !== 'data:' && url.hostname !== '127.0.0.1') faults.offHost.push(request.url());
  });
  page.on('console', (message) => {
    if (message.type() === 'error') faults.consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => faults.consoleErrors.push(error.message));
}
