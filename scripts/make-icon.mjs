#!/usr/bin/env node
// Draws the app icon, resources/icon.png (512x512, RGBA), from which electron-builder
// makes every platform's icon (.icns, .ico, the Linux sizes). Committed; run again
// only to change it: `node scripts/make-icon.mjs`.
// The picture: a directory card (a rounded square in the console's blue) with
// three listing rows, each a round avatar and a bar.
import fs from 'node:fs';
import path from 'node:path';
import { PNG } from 'pngjs';

const SIZE = 512;
const png = new PNG({ width: SIZE, height: SIZE });

const BACKGROUND = [47, 111, 235]; // the console's primary colour (src-renderer/theme.ts)
const FOREGROUND = [255, 255, 255];

/** Coverage of a pixel by a shape, with 4x4 supersampling for smooth edges. */
function coverage(x, y, inside) {
  let hits = 0;
  for (let i = 0; i < 4; i++) for (let j = 0; j < 4; j++) if (inside(x + (i + 0.5) / 4, y + (j + 0.5) / 4)) hits++;
  return hits / 16;
}

const roundedRect = (left, top, right, bottom, radius) => (x, y) => {
  const cx = Math.min(Math.max(x, left + radius), right - radius);
  const cy = Math.min(Math.max(y, top + radius), bottom - radius);
  return x >= left && x <= right && y >= top && y <= bottom && (x - cx) ** 2 + (y - cy) ** 2 <= radius ** 2;
};
const circle = (cx, cy, r) => (x, y) => (x - cx) ** 2 + (y - cy) ** 2 <= r * r;

const card = roundedRect(32, 32, 480, 480, 96);
const rows = [148, 256, 364].flatMap((cy) => [circle(136, cy, 34), roundedRect(196, cy - 22, 400, cy + 22, 22)]);
const mark = (x, y) => rows.some((shape) => shape(x, y));

for (let y = 0; y < SIZE; y++) {
  for (let x = 0; x < SIZE; x++) {
    const alpha = coverage(x, y, card);
    const white = alpha > 0 ? coverage(x, y, mark) : 0;
    const offset = (y * SIZE + x) * 4;
    for (let c = 0; c < 3; c++) png.data[offset + c] = Math.round(BACKGROUND[c] * (1 - white) + FOREGROUND[c] * white);
    png.data[offset + 3] = Math.round(alpha * 255);
  }
}

const target = path.resolve(import.meta.dirname, '../resources/icon.png');
fs.writeFileSync(target, PNG.sync.write(png));
console.log(`wrote ${path.relative(process.cwd(), target)} (${SIZE}x${SIZE})`);
