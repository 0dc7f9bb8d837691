/**
 * Writes a JSON document as UTF-8 bytes from literal JSON text and ready
 * JSON bytes (profiles from the profile cache), without turning those bytes
 * into strings and back: a search answer is ~17 KB of profiles, and as
 * strings that was several copies of garbage per request.
 *
 * The pieces are only noted until `toBuffer`, which sizes the document and
 * writes every piece once into one Buffer: no Buffer per text piece, no view
 * per profile, no concatenation (a search answer is written ~10,000 times a second).
 */
export class JsonBytes {
  /** Text pieces and byte pieces in order; a byte piece is used from `starts` for `lengths` bytes. */
  private readonly parts: (string | Buffer)[] = [];
  private readonly starts: number[] = [];
  private readonly lengths: number[] = [];
  private size = 0;
  private text = '';

  /** Appends JSON text (syntax, or values already encoded with JSON.stringify). */
  raw(json: string): this {
    this.text += json;
    return this;
  }

  /** Appends JSON bytes as they are. */
  bytes(json: Buffer): this {
    return this.bytesUpTo(json, json.length);
  }

  /** Appends the first `length` bytes of `json` (e.g. an object without its closing brace, to add fields). */
  bytesUpTo(json: Buffer, length: number): this {
    return this.range(json, 0, length);
  }

  /** Appends bytes `start` to `end` of `source` (a text inside a larger buffer, without making a view of it). */
  range(source: Buffer, start: number, end: number): this {
    this.flush();
    this.parts.push(source);
    this.starts.push(start);
    this.lengths.push(end - start);
    this.size += end - start;
    return this;
  }

  /** Appends `items`, separated by commas, each written by `write`. */
  list<T>(items: readonly T[], write: (item: T, out: this) => void): this {
    for (let i = 0; i < items.length; i++) {
      if (i > 0) this.text += ',';
      write(items[i]!, this);
    }
    return this;
  }

  toBuffer(): Buffer {
    this.flush();
    const { parts, starts, lengths } = this;
    const only = parts[0];
    if (parts.length === 1 && typeof only !== 'string' && starts[0] === 0 && lengths[0] === only!.length) return only!;
    const out = Buffer.allocUnsafe(this.size);
    let at = 0;
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      if (typeof part === 'string') {
        const length = lengths[i]!;
        // A short ASCII text (a score, a comma): written here, cheaper than a call into Node's UTF-8 writer.
        if (length <= SHORT_TEXT && length === part.length) for (let k = 0; k < length; k++) out[at++] = part.charCodeAt(k);
        else at += out.write(part, at, length, 'utf8');
      } else at += part.copy(out, at, starts[i], starts[i]! + lengths[i]!);
    }
    return out;
  }

  private flush(): void {
    if (this.text === '') return;
    const length = utf8Length(this.text);
    this.parts.push(this.text);
    this.starts.push(0);
    this.lengths.push(length);
    this.size += length;
    this.text = '';
  }
}

/** Texts up to this many characters are measured and written in JavaScript when ASCII (most of a search answer's ~20 texts). */
const SHORT_TEXT = 32;

/** The UTF-8 length of `text`: counted here for a short ASCII text, else by Node. */
function utf8Length(text: string): number {
  if (text.length > SHORT_TEXT) return Buffer.byteLength(text, 'utf8');
  for (let k = 0; k < text.length; k++) if (text.charCodeAt(k) >= 0x80) return Buffer.byteLength(text, 'utf8');
  return text.length;
}
