/**
 * The console's Content-Security-Policy, the same in the browser (header on
 * /console) and in Electron (set on the session). naive-ui injects its styles
 * at run time, hence 'unsafe-inline' for styles only; scripts come from our
 * own files and nowhere else.
 */
export const CONSOLE_CSP_DIRECTIVES: Readonly<Record<string, string>> = {
  'default-src': "'self'",
  'script-src': "'self'",
  'style-src': "'self' 'unsafe-inline'",
  'img-src': "'self' data:",
  'connect-src': "'self'",
  'object-src': "'none'",
  'base-uri': "'none'",
  'frame-ancestors': "'none'",
  'form-action': "'self'",
};

export function contentSecurityPolicy(overrides: Readonly<Record<string, string>> = {}): string {
  return Object.entries({ ...CONSOLE_CSP_DIRECTIVES, ...overrides })
    .map(([directive, value]) => `${directive} ${value}`)
    .join('; ');
}

export const CONSOLE_CSP = contentSecurityPolicy();
