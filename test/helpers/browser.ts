import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { type Browser, chromium, type Page } from 'playwright-core';
import { api, crewCommand, type DaemonProcess } from './daemon-process.js';

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

/**
 * Opens the dashboard of the daemon on `home` in a fresh context of `browser`, as a person would (`crew
 * dashboard --print-url`, which signs in), watched into `faults`; resolves once the page is ready and live.
 */
export async function openDashboardOf(browser: Browser, home: string, faults: PageFaults): Promise<Page> {
  const [node, argv] = crewCommand(['dashboard', '--print-url']);
  const { stdout } = await promisify(execFile)(node, argv, { env: { ...process.env, CREW_HOME: home } });
  return openSignedIn(browser, stdout.trim(), faults);
}

/**
 * {@link openDashboardOf} without the CLI process (about a second of CPU): the login link comes from
 * `POST /api/dashboard/login-codes`, the request `crew dashboard --print-url` makes.
 */
export async function openDashboardAt(
  browser: Browser,
  daemon: Pick<DaemonProcess, 'url' | 'token'>,
  faults: PageFaults,
): Promise<Page> {
  const answer = await api(daemon, 'POST', '/api/dashboard/login-codes');
  if (answer.status !== 200)
    throw new Error(`no login link: ${answer.status} ${JSON.stringify(answer.body)}`);
  return openSignedIn(browser, answer.body.login_url as string, faults);
}

async function openSignedIn(browser: Browser, login: string, faults: PageFaults): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  watchPage(page, faults);
  await page.goto(login);
  await page.locator('#app[data-state="ready"]').waitFor();
  await page.locator('#connection[data-state="live"]').waitFor();
  return page;
}
