/** What an in-process import A/B needs of a checkout (this one or another, perhaps from before the Store port). */
import path from 'node:path';

export interface ImportCheckout {
  name: string;
  createConfig: (options: { dataDir: string }) => unknown;
  openDatabase: (file: string) => { $client: { close(): void } };
  createServices: (deps: { db: unknown; config: unknown }) => unknown;
  /** Sync before the Store port, async since: await its result either way. */
  importAgents: (services: unknown, records: unknown[], options?: object) => unknown;
}

/** The checkout at `root`'s own config, database, services and importer, loaded from its sources. */
export async function loadImportCheckout(name: string, root: string): Promise<ImportCheckout> {
  const from = (file: string) => import(path.join(root, file));
  const [config, client, services, importer] = await Promise.all([
    from('src-api/config.ts'),
    from('src-api/db/client.ts'),
    from('src-api/services.ts'),
    from('src-api/modules/agents/agents-import.ts'),
  ]);
  return {
    name,
    createConfig: config.createConfig,
    openDatabase: client.openDatabase,
    createServices: services.createServices,
    importAgents: importer.importAgents,
  };
}
