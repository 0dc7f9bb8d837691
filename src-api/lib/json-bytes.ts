/**
 * Writes a JSON document as UTF-8 bytes from literal JSON text and ready
 * JSON bytes (profiles from the profile cache), without turning those bytes
 * into strings and back: a search answer is ~17 KB of profiles, and as
 * strings that was several copies of garbage per request.
 */
export class JsonBytes {
  private readonly parts: Buffer[] = [];
  private text = '';

  /** Appends JSON text (syntax, or values already encoded with JSON.stringify). */
  raw(json: string): this {
    this.text += json;
    return this;
  }

  /** Appends JSON bytes as they are. */
  bytes(json: Buffer): this {
    this.flush();
    this.parts.push(json);
    return this;
  }

  /** Appends `items`, separated by commas, each written by `write`. */
  list<T>(items: readonly T[], write: (item: T, out: this) => void): this {
    items.forEach((item, i) => {
      if (i > 0) this.raw(',');
      write(item, this);
    });
    return this;
  }

  toBuffer(): Buffer {
    this.flush();
    return this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
  }

  private flush(): void {
    if (this.text === '') return;
    this.parts.push(Buffer.from(this.text, 'utf8'));
    this.text = '';
  }
}
