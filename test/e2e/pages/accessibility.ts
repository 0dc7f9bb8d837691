import fs from 'node:fs';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { expect, type Page } from '@playwright/test';
import { settled } from './console-api';

/** WCAG 2.1 A and AA, the bar issue 14 sets for both apps. */
const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];
const BLOCKING = new Set(['critical', 'serious']);
const REPORT = path.join('test-results', 'axe');

export interface AxeFinding {
  id: string;
  impact: string;
  help: string;
  nodes: number;
  targets: string[];
}

/**
 * Runs axe-core over the page as it is now and returns its critical and serious violations.
 * Every scan is also written to test-results/axe/<label>.json, so the counts can be compared
 * from one run to the next.
 */
export async function blockingViolations(page: Page, label: string): Promise<AxeFinding[]> {
  // Toasts leave on their own timer: one that starts fading out while axe runs reads as low contrast
  // (a flaky "serious" finding). The scan waits until they are gone; what they said was checked by the test.
  await expect(page.locator('.n-message')).toHaveCount(0, { timeout: 10_000 });
  await settled(page);
  const results = await new AxeBuilder({ page }).withTags(WCAG_TAGS).analyze();
  const findings = results.violations
    .filter((violation) => BLOCKING.has(violation.impact ?? ''))
    .map((violation) => ({
      id: violation.id,
      impact: violation.impact ?? '',
      help: violation.help,
      nodes: violation.nodes.length,
      targets: violation.nodes.slice(0, 5).map((node) => node.target.join(' ')),
    }));
  fs.mkdirSync(REPORT, { recursive: true });
  fs.writeFileSync(
    path.join(REPORT, `${label}.json`),
    JSON.stringify({ label, url: page.url(), elements: findings.reduce((sum, finding) => sum + finding.nodes, 0), findings }, null, 2),
  );
  return findings;
}

/** Asserts, softly so that one run reports every screen, that `label` has no critical or serious violation. */
export async function expectAccessible(page: Page, label: string): Promise<void> {
  const findings = await blockingViolations(page, label);
  expect.soft(findings, `axe on ${label}`).toEqual([]);
}

/** Asserts that nothing on the page is wider than the window (no horizontal scroll, nothing cut off at the right). */
export async function expectNoHorizontalOverflow(page: Page, label: string): Promise<void> {
  await settled(page);
  // A string, run in the page: the tests are compiled without the DOM's types.
  const measure = async () =>
    (await page.evaluate(`(() => {
    const width = document.documentElement.clientWidth;
    const wide = [];
    for (const el of document.querySelectorAll('body *')) {
      const style = getComputedStyle(el);
      if (style.visibility === 'hidden' || style.display === 'none') continue;
      const box = el.getBoundingClientRect();
      if (box.width === 0 || box.height === 0) continue;
      // Clipped by an ancestor that fits (an ellipsis cell) is not cut off by the window.
      const clipped = () => {
        for (let up = el.parentElement; up; up = up.parentElement) {
          const o = getComputedStyle(up).overflowX;
          if ((o === 'hidden' || o === 'clip') && up.getBoundingClientRect().right <= width + 1) return true;
        }
        return false;
      };
      if (box.right > width + 1 && !clipped()) wide.push((el.getAttribute('data-testid') || el.tagName.toLowerCase() + '.' + [...el.classList].join('.')) + ' ' + Math.round(box.right));
      // Scroll areas that hide content sideways (actions out of sight).
      if ((style.overflowX === 'auto' || style.overflowX === 'scroll') && el.scrollWidth > el.clientWidth + 1 && !el.closest('pre, code, textarea, .allow-x-scroll'))
        wide.push('scrolls sideways: ' + (el.getAttribute('data-testid') || el.tagName.toLowerCase() + '.' + [...el.classList].join('.')));
    }
    return [...new Set(wide)].slice(0, 10);
  })()`)) as string[];
  // Right after a resize a scroll container can still be laid out for the old width (Naive UI's
  // scrollbar re-measures on its resize observer): once in CI at 1024 px, a dashboard page's
  // n-scrollbar-container scrolled sideways. Asked again for up to 2 s; what stays wide fails.
  let overflow = await measure();
  for (let tries = 0; overflow.length > 0 && tries < 8; tries++) {
    await page.waitForTimeout(250);
    overflow = await measure();
  }
  expect.soft(overflow, `horizontal overflow on ${label}`).toEqual([]);
}
