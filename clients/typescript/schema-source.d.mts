/** Where the generated types live: clients/typescript/src/schema.d.ts. */
export declare const SCHEMA_FILE: string;
export declare const API_PREFIX: '/api/v1';
/** The document restricted to the public REST API (paths under /api/v1). */
export declare function publicDocument<T extends { paths?: Record<string, unknown> }>(document: T): T;
/** The text of schema.d.ts for an OpenAPI document, formatted with the repository's Prettier settings. */
export declare function generateSchemaSource(document: unknown): Promise<string>;
