import { expect, type Locator } from '@playwright/test';

/**
 * The one date format of both apps (`<DateTime>`): a `<time>` reading relative ("just now",
 * "5 minutes ago"), its ISO moment in `datetime`, and the absolute time in the reader's locale as
 * its tooltip (`title`), with seconds where asked.
 */
export async function expectRelativeTime(time: Locator, options: { seconds?: boolean } = {}): Promise<void> {
  await expect(time).toHaveText(/^(\S+ )?(just now|\d+ (second|minute|hour|day|month|year)s? ago|yesterday|last \w+)$/);
  const iso = await time.getAttribute('datetime');
  expect(iso).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/);
  const absolute = await time.evaluate((element, seconds) => {
    const format = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: seconds ? 'medium' : 'short' });
    return format.format(new Date(element.getAttribute('datetime')!));
  }, options.seconds ?? false);
  await expect(time).toHaveAttribute('title', absolute);
  expect(absolute).toContain(String(new Date(iso!).getFullYear()));
}
