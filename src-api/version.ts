import packageJson from '../package.json' with { type: 'json' };

/** The service version reported by /health and the OpenAPI document: package.json's. */
export const API_VERSION: string = packageJson.version;
