/**
 * The benches' load generator, in a process of its own (bench/lib/load-client.ts starts it and says why):
 * receives a LoadJob over IPC, runs it, answers its LoadResult.
 */
import { runLoad, type LoadJob } from './run-load';

process.on('message', (job: LoadJob) => {
  void runLoad(job).then((result) => process.send!(result));
});
