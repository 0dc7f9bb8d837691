/**
 * Field-by-field comparison of an audit entry's before and after. Nested
 * objects become dotted paths ("rating.average"); arrays are compared whole,
 * since "capabilities changed from [a, b] to [a, c]" reads better than per-index rows.
 */
export type DiffKind = 'added' | 'removed' | 'changed' | 'unchanged';

export interface DiffRow {
  /** Dotted path of the field; "" when before/after are not objects. */
  path: string;
  kind: DiffKind;
  before: unknown;
  after: unknown;
}

export interface DiffSummary {
  added: number;
  removed: number;
  changed: number;
  unchanged: number;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function flatten(value: unknown, prefix: string, out: Map<string, unknown>): void {
  if (isPlainObject(value) && Object.keys(value).length > 0) {
    for (const [key, child] of Object.entries(value)) flatten(child, prefix ? `${prefix}.${key}` : key, out);
    return;
  }
  out.set(prefix, value);
}

/** Stable for objects whatever their key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, child: unknown) =>
    isPlainObject(child)
      ? Object.fromEntries(
          Object.keys(child)
            .sort()
            .map((key) => [key, child[key]]),
        )
      : child,
  );
}

const isAbsent = (value: unknown) => value === null || value === undefined;

export function diffValues(before: unknown, after: unknown): DiffRow[] {
  const beforeFields = new Map<string, unknown>();
  const afterFields = new Map<string, unknown>();
  if (!isAbsent(before)) flatten(before, '', beforeFields);
  if (!isAbsent(after)) flatten(after, '', afterFields);

  const paths = [...beforeFields.keys()];
  for (const path of afterFields.keys()) if (!beforeFields.has(path)) paths.push(path);

  return paths.map((path) => {
    const hasBefore = beforeFields.has(path);
    const hasAfter = afterFields.has(path);
    const row = { path, before: beforeFields.get(path), after: afterFields.get(path) };
    if (!hasBefore) return { ...row, kind: 'added' };
    if (!hasAfter) return { ...row, kind: 'removed' };
    return { ...row, kind: canonical(row.before) === canonical(row.after) ? 'unchanged' : 'changed' };
  });
}

export function summarize(rows: readonly DiffRow[]): DiffSummary {
  const summary: DiffSummary = { added: 0, removed: 0, changed: 0, unchanged: 0 };
  for (const row of rows) summary[row.kind]++;
  return summary;
}

/** Actions that bring a record into being; any other entry with only an "after" records what was done (a test send, a redelivery). */
const isCreation = (action: string | undefined) => action === undefined || /\.(create|import|submit)$/.test(action);

/** Field paths for a one-line list: the first three, then how many more. */
const listPaths = (paths: string[]) => (paths.length <= 3 ? paths.join(', ') : `${paths.slice(0, 3).join(', ')} +${paths.length - 3} more`);

/** One line for a list: which fields an entry changed. `action` (e.g. "webhook.test") tells a creation from a recorded act. */
export function describeChange(before: unknown, after: unknown, action?: string): string {
  if (isAbsent(before) && isAbsent(after)) return 'No recorded fields';
  const rows = diffValues(before, after);
  if (isAbsent(before) && !isCreation(action)) return `Recorded: ${listPaths(rows.map((row) => row.path || 'value'))}`;
  if (isAbsent(before)) return `Created with ${rows.length} field${rows.length === 1 ? '' : 's'}`;
  if (isAbsent(after)) return `Removed (${rows.length} field${rows.length === 1 ? '' : 's'})`;
  const touched = rows.filter((row) => row.kind !== 'unchanged').map((row) => row.path || 'value');
  if (touched.length === 0) return 'No field changed';
  return listPaths(touched);
}

/** How a value reads in a diff cell: strings as they are, everything else as JSON. */
export function formatValue(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** Fields that name a record, in order of preference: an agent's name, an endpoint's URL, an account's e-mail, a post's title. */
const NAME_FIELDS = ['name', 'agent_name', 'title', 'email', 'url'];

/**
 * What a person calls the entry's record, read from what the entry recorded (after, else before):
 * the audit log shows it beside the id, so a row reads "Agent: Paper Digest" rather than an id alone.
 */
export function entityName(before: unknown, after: unknown): string | null {
  for (const snapshot of [after, before]) {
    if (snapshot === null || typeof snapshot !== 'object' || Array.isArray(snapshot)) continue;
    for (const field of NAME_FIELDS) {
      const value = (snapshot as Record<string, unknown>)[field];
      if (typeof value === 'string' && value.trim() !== '') return value;
    }
  }
  return null;
}
