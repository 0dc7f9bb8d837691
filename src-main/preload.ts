import { exposeElectronTRPC } from 'trpc-electron/main';

// The renderer's only bridge: window.electronTRPC, a send/receive pair on one IPC channel.
// Bundled into one CommonJS file that requires nothing but `electron`, so it runs sandboxed.
exposeElectronTRPC();
