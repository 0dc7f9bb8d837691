/** The server's password rule (CONTRACT.md section 6), checked here first so the form can say so at once. */
export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 200;

export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN) return `At least ${PASSWORD_MIN} characters.`;
  if (password.length > PASSWORD_MAX) return `At most ${PASSWORD_MAX} characters.`;
  return null;
}

export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
