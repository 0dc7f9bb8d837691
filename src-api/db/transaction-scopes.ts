import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * How a statement finds the transaction it runs in, without being passed it: an AsyncLocalStorage scope per
 * transaction, switched off while no transaction is open.
 *
 * While any AsyncLocalStorage is on, Node (20) runs its async hooks for every promise and callback the process
 * makes: about 2 % of the server's CPU for a search over HTTP, though only code inside a transaction reads the
 * scope. `AsyncLocalStorage.disable()` turns the hooks off again (the first `run()` after turns them on), so each
 * store switches its scopes off once its last open transaction has ended. Nothing is lost: a scope is read only
 * while its transaction is open (`done` marks one that has ended, for the work it left running).
 */
export class TransactionScopes<Scope extends { done: boolean }> {
  private readonly storage = new AsyncLocalStorage<Scope>();
  /** Outermost transactions begun and not ended (waiting for their turn included). */
  private open = 0;

  /** The transaction the calling code runs in, if it is still open. */
  current(): Scope | undefined {
    const scope = this.storage.getStore();
    return scope !== undefined && !scope.done ? scope : undefined;
  }

  /** Runs `work` (and what it awaits or starts) in `scope`. Only inside `outermost`. */
  run<T>(scope: Scope, work: () => Promise<T>): Promise<T> {
    return this.storage.run(scope, work);
  }

  /** An outermost transaction from start to end: the scopes stay on until the last such has ended. */
  async outermost<T>(transaction: () => Promise<T>): Promise<T> {
    this.open++;
    try {
      return await transaction();
    } finally {
      if (--this.open === 0) this.storage.disable();
    }
  }
}
