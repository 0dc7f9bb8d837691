/** "1 review", "1,234 reviews": a count with its noun, for both apps. */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString()} ${count === 1 ? one : many}`;
}
