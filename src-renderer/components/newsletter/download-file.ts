/**
 * Saves `text` as a file through the browser's download (Electron shows its
 * save dialog for the same thing). The object URL is released once the
 * download has started.
 */
export function downloadTextFile(text: string, filename: string, type = 'text/csv;charset=utf-8'): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  link.rel = 'noopener';
  link.style.display = 'none';
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** newsletter-subscribers-2025-03-01.csv, by the local date. */
export function subscribersFileName(date = new Date()): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `newsletter-subscribers-${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}.csv`;
}
