/// <reference types="vite/client" />

interface Window {
  /** Set by the Electron preload (trpc-electron); absent in a browser. */
  electronTRPC?: unknown;
}
