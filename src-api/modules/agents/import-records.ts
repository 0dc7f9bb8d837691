import { z } from 'zod';
import { ValidationError } from '../../errors';
import { idParamSchema } from '../../lib/schemas';
import { agentPatchSchema, agentStatusSchema, ratingSummarySchema, statusMessageSchema } from './agents.schemas';

/**
 * The records of an import file (`cli import`) on their own: their shape, checked before the
 * directory is read, and each problem as a JSON pointer and a plain-English reason. What the
 * records do to the directory is agents-import.ts's job.
 */

/** Progress is reported every this many records. */
export const PROGRESS_EVERY = 1000;

/** One record of an import file, with where it came from for error messages. */
export interface ImportRecord {
  value: unknown;
  /** 1-based line where the record starts. */
  line: number;
  /** 0-based position in a JSON array (absent in JSONL). */
  index?: number;
}

/** Something wrong with one record. `pointer` is a JSON pointer into the record ("" for the whole record). */
export interface ImportIssue {
  line: number;
  index?: number;
  pointer: string;
  detail: string;
}

export class ImportRejectedError extends ValidationError {
  constructor(
    readonly issues: ImportIssue[],
    readonly total: number,
  ) {
    const records = new Set(issues.map((issue) => `${issue.line}:${issue.index ?? ''}`)).size;
    super(
      `${records} of ${total} record${total === 1 ? '' : 's'} ${records === 1 ? 'is' : 'are'} invalid; nothing was imported`,
      issues.map((issue) => ({ pointer: `/${issue.index ?? issue.line}${issue.pointer}`, detail: issue.detail })),
    );
  }
}

const isoUtcSchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/, 'must be an ISO 8601 UTC date-time ending in Z')
  .refine((value) => !Number.isNaN(Date.parse(value)), 'must be a valid date-time')
  .transform((value) => new Date(value).toISOString());

/** Every field optional and without defaults: which fields a record has matters for updates. */
const importRecordSchema = agentPatchSchema.extend({
  id: idParamSchema.optional(),
  verified: z.boolean().optional(),
  listed: z.boolean().optional(),
  status: agentStatusSchema.optional(),
  status_message: statusMessageSchema.nullable().optional(),
  created_at: isoUtcSchema.optional(),
  updated_at: isoUtcSchema.optional(),
  /** Computed: accepted so that exports import back, then ignored. */
  trust_score: z.number().optional(),
  /** Computed from reviews: accepted so that exports import back, then ignored. */
  rating: ratingSummarySchema.optional(),
  /** Set only by a verified claim made with an account: accepted so that exports import back, then ignored. */
  owner: z.object({ name: z.string() }).nullable().optional(),
});
export type ImportRecordData = z.infer<typeof importRecordSchema>;

/** A record whose shape is right, with its parsed fields. */
export interface CheckedRecord {
  record: ImportRecord;
  data: ImportRecordData;
}

/**
 * The shape of every record (no database needed): the records that pass, parsed, and a plain-English
 * issue for each problem of the others. `onProgress(n)` is called before every PROGRESS_EVERY-th record.
 */
export function checkShapes(
  records: readonly ImportRecord[],
  onProgress?: (done: number) => void,
): { checked: CheckedRecord[]; issues: ImportIssue[] } {
  const issues: ImportIssue[] = [];
  const checked: CheckedRecord[] = [];
  records.forEach((record, n) => {
    if (n % PROGRESS_EVERY === 0) onProgress?.(n);
    const issue = (pointer: string, detail: string) => issues.push({ line: record.line, index: record.index, pointer, detail });
    const value = record.value;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      issue('', `a record must be a JSON object, got ${describeValue(value)}`);
      return;
    }
    const result = importRecordSchema.safeParse(value);
    if (!result.success) {
      for (const zodIssue of result.error.issues) for (const [pointer, detail] of describeIssue(zodIssue, value)) issue(pointer, detail);
      return;
    }
    const { created_at: createdAt, updated_at: updatedAt } = result.data;
    if (updatedAt !== undefined && createdAt === undefined) issue('/updated_at', 'can only be given together with /created_at');
    else if (updatedAt !== undefined && createdAt !== undefined && updatedAt < createdAt)
      issue('/updated_at', 'must not be before /created_at');
    else checked.push({ record, data: result.data });
  });
  return { checked, issues };
}

/** Where a record is in its file, for messages. */
export function where(record: ImportRecord): string {
  return record.index === undefined ? `line ${record.line}` : `line ${record.line} (index ${record.index})`;
}

/** Issues in file order (line, then array index), each record's in the order found. */
export function sortIssues(issues: ImportIssue[]): ImportIssue[] {
  return issues
    .map((issue, order) => ({ issue, order }))
    .sort((a, b) => a.issue.line - b.issue.line || (a.issue.index ?? 0) - (b.issue.index ?? 0) || a.order - b.order)
    .map(({ issue }) => issue);
}

/** "/capabilities/0" for a zod path. */
function pointerOf(path: readonly PropertyKey[]): string {
  return path.map((part) => `/${String(part).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number') return 'a number';
  if (typeof value === 'boolean') return 'a boolean';
  return typeof value;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const part of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[part];
  }
  return value;
}

/** A zod issue as [pointer, plain-English reason] pairs (one per unknown key). */
function describeIssue(issue: z.core.$ZodIssue, root: unknown): [string, string][] {
  const pointer = pointerOf(issue.path);
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((key) => [`${pointer}/${key}`, 'is not a field of an agent']);
    case 'invalid_type': {
      const expected = issue.expected === 'array' || issue.expected === 'object' ? `an ${issue.expected}` : `a ${issue.expected}`;
      return [[pointer, `must be ${expected}, got ${describeValue(valueAt(root, issue.path))}`]];
    }
    case 'too_small':
      if (issue.origin === 'string')
        return [[pointer, Number(issue.minimum) === 1 ? 'must not be empty' : `must be at least ${issue.minimum} characters`]];
      if (issue.origin === 'array') return [[pointer, `must have at least ${issue.minimum} items`]];
      return [[pointer, `must be at least ${issue.minimum}`]];
    case 'too_big':
      if (issue.origin === 'string') return [[pointer, `must be at most ${issue.maximum} characters`]];
      if (issue.origin === 'array') return [[pointer, `must have at most ${issue.maximum} items`]];
      return [[pointer, `must be at most ${issue.maximum}`]];
    case 'invalid_value':
      return [[pointer, `must be one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}`]];
    default:
      return [[pointer, issue.message.charAt(0).toLowerCase() + issue.message.slice(1)]];
  }
}
