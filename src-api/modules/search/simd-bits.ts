/**
 * The AND of four bitsets and its count of 1 bits in WebAssembly SIMD (16 bytes a step, `i8x16.popcnt`): the
 * matching step's one pass over every word of the bitsets for queries on words most agents use
 * (matching-bits.ts). JavaScript has no popcount instruction nor 128-bit lanes: at 100,000 agents (3,125 words)
 * the same pass costs ~4.6 µs in JavaScript, ~1.1 µs here, and ~2 µs more to copy the inputs in and the result out.
 *
 * The module is its own scratch: the bitsets are copied into its memory (grown to fit), ANDed there, and the
 * result copied out, so that no view of its memory (which a grow would detach) outlives a call. Its source is
 * `AND_COUNT_WAT`; `AND_COUNT_WASM` is that compiled by wabt's wat2wasm (test/unit/simd-bits.test.ts compiles it
 * again and compares). Where WebAssembly SIMD is missing, `andCount` returns undefined and the caller's
 * JavaScript loop runs.
 */
export const AND_COUNT_WAT = `(module
  (memory (export "memory") 1)
  ;; out = a & b & c & d over $bytes bytes (a multiple of 16; byte offsets in this memory); returns its count of 1 bits.
  (func (export "andCount") (param $a i32) (param $b i32) (param $c i32) (param $d i32) (param $out i32) (param $bytes i32) (result i32)
    (local $i i32) (local $v v128) (local $sum v128)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $bytes)))
        (local.set $v
          (v128.and
            (v128.and (v128.load (i32.add (local.get $a) (local.get $i))) (v128.load (i32.add (local.get $b) (local.get $i))))
            (v128.and (v128.load (i32.add (local.get $c) (local.get $i))) (v128.load (i32.add (local.get $d) (local.get $i))))))
        (v128.store (i32.add (local.get $out) (local.get $i)) (local.get $v))
        (local.set $sum
          (i32x4.add (local.get $sum)
            (i32x4.extadd_pairwise_i16x8_u (i16x8.extadd_pairwise_i8x16_u (i8x16.popcnt (local.get $v))))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $next)))
    (i32.add
      (i32.add (i32x4.extract_lane 0 (local.get $sum)) (i32x4.extract_lane 1 (local.get $sum)))
      (i32.add (i32x4.extract_lane 2 (local.get $sum)) (i32x4.extract_lane 3 (local.get $sum))))))`;

export const AND_COUNT_WASM =
  'AGFzbQEAAAABCwFgBn9/f39/fwF/AwIBAAUDAQABBxUCBm1lbW9yeQIACGFuZENvdW50AAAKewF5AgF/AnsCQANAIAYgBU8NASAAIAZq/QAEACABIAZq/QAEAP1OIAIgBmr9AAQAIAMgBmr9AAQA/U79TiEHIAQgBmogB/0LBAAgCCAH/WL9ff1//a4BIQggBkEQaiEGDAALCyAI/RsAIAj9GwFqIAj9GwIgCP0bA2pqCw==';

/** For A/B measurements and tests: off, `andCount` returns undefined (the JavaScript loops run). */
export const SIMD_AND = { enabled: true };

interface Kernel {
  memory: { readonly buffer: ArrayBuffer; grow(pages: number): number };
  andCount(a: number, b: number, c: number, d: number, out: number, bytes: number): number;
}

let kernel: Kernel | undefined | null = null;
/** A view of the whole memory, made again after a grow. */
let heap = new Uint32Array(0);

/** The part of the WebAssembly global used here (the project's TypeScript libraries do not declare it). */
interface WebAssemblyApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: unknown };
}

function loadKernel(): Kernel | undefined {
  const wasm = (globalThis as { WebAssembly?: WebAssemblyApi }).WebAssembly;
  const bytes = Buffer.from(AND_COUNT_WASM, 'base64');
  if (wasm === undefined || !wasm.validate(bytes)) return undefined;
  return new wasm.Instance(new wasm.Module(bytes)).exports as Kernel;
}

/**
 * `out` = a & b & c & d over their first `words` words (each at least that long); the count of its 1 bits. The
 * same array may be given more than once (copied once). Undefined when SIMD is unavailable or off.
 */
export function andCount(
  a: Uint32Array,
  b: Uint32Array,
  c: Uint32Array,
  d: Uint32Array,
  out: Uint32Array,
  words: number,
): number | undefined {
  if (!SIMD_AND.enabled) return undefined;
  if (kernel === null) kernel = loadKernel();
  if (kernel === undefined) return undefined;
  // Each bitset in its own region, padded with zeros to whole 16-byte steps; the result in a fifth.
  const stride = (words + 3) & ~3;
  const needed = 5 * stride * 4;
  const { memory } = kernel;
  if (memory.buffer.byteLength < needed) memory.grow(Math.ceil((needed - memory.buffer.byteLength) / 65_536));
  if (heap.buffer !== memory.buffer) heap = new Uint32Array(memory.buffer);
  // An input given again reuses the region of its first copy: no closure or array per call on this hot path.
  const ra = copyIn(a, 0, words, stride);
  const rb = b === a ? ra : copyIn(b, 1, words, stride);
  const rc = c === a ? ra : c === b ? rb : copyIn(c, 2, words, stride);
  const rd = d === a ? ra : d === b ? rb : d === c ? rc : copyIn(d, 3, words, stride);
  const count = kernel.andCount(ra * stride * 4, rb * stride * 4, rc * stride * 4, rd * stride * 4, 4 * stride * 4, stride * 4);
  out.set(heap.subarray(4 * stride, 4 * stride + words));
  return count;
}

/** Copies `bits`' first `words` words into region `region` of the memory, zero-padded to `stride`; the region. */
function copyIn(bits: Uint32Array, region: number, words: number, stride: number): number {
  heap.set(bits.subarray(0, words), region * stride);
  if (stride > words) heap.fill(0, region * stride + words, (region + 1) * stride);
  return region;
}
