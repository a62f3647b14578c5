// Writes a GGUF file shaped like Llama 3.1 8B in Q4_K (Q6_K output head), as llama.cpp's
// convert + quantize lay it out: the header is real (metadata, a 128,256-token vocabulary, every
// tensor's info) and the multi-GiB data section is a hole in a sparse file, so the file costs a
// few MiB of disk. kvplan reads only the header; the page must read it through growing slices.
import fs from "node:fs";

const GGUF_UINT32 = 4, GGUF_FLOAT32 = 6, GGUF_STRING = 8, GGUF_ARRAY = 9, GGUF_INT32 = 5;
const F32 = 0, Q4_K = 12, Q6_K = 14;
// ggml's block sizes: [elements per block, bytes per block] (ggml.c type_traits).
const BLOCKS = {[F32]: [1, 4], [Q4_K]: [256, 144], [Q6_K]: [256, 210]};
const ALIGNMENT = 32n;

class Writer {
  constructor() { this.parts = []; this.length = 0; }
  push(buffer) { this.parts.push(buffer); this.length += buffer.length; }
  u32(v) { const b = Buffer.alloc(4); b.writeUInt32LE(v); this.push(b); }
  i32(v) { const b = Buffer.alloc(4); b.writeInt32LE(v); this.push(b); }
  u64(v) { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); this.push(b); }
  f32(v) { const b = Buffer.alloc(4); b.writeFloatLE(v); this.push(b); }
  str(s) { const b = Buffer.from(s, "utf8"); this.u64(b.length); this.push(b); }
  buffer() { return Buffer.concat(this.parts); }
}

export const LLAMA_8B = {embd: 4096, layers: 32, heads: 32, kvHeads: 8, ff: 14336, vocab: 128256, ctx: 131072};

/// The tensors of a Llama model: [name, type, dims in ggml order (ne0 first)].
function llamaTensors(m) {
  const kv = (m.embd / m.heads) * m.kvHeads;
  const list = [["token_embd.weight", Q4_K, [m.embd, m.vocab]], ["output_norm.weight", F32, [m.embd]], ["output.weight", Q6_K, [m.embd, m.vocab]]];
  for (let i = 0; i < m.layers; i++) {
    list.push([`blk.${i}.attn_norm.weight`, F32, [m.embd]], [`blk.${i}.attn_q.weight`, Q4_K, [m.embd, m.embd]],
      [`blk.${i}.attn_k.weight`, Q4_K, [m.embd, kv]], [`blk.${i}.attn_v.weight`, Q4_K, [m.embd, kv]],
      [`blk.${i}.attn_output.weight`, Q4_K, [m.embd, m.embd]], [`blk.${i}.ffn_norm.weight`, F32, [m.embd]],
      [`blk.${i}.ffn_gate.weight`, Q4_K, [m.embd, m.ff]], [`blk.${i}.ffn_up.weight`, Q4_K, [m.embd, m.ff]],
      [`blk.${i}.ffn_down.weight`, Q4_K, [m.ff, m.embd]]);
  }
  return list;
}

function tensorBytes(type, dims) {
  const elements = dims.reduce((a, b) => a * BigInt(b), 1n);
  const [per, bytes] = BLOCKS[type];
  return (elements / BigInt(per)) * BigInt(bytes);
}

const align = (n) => ((n + ALIGNMENT - 1n) / ALIGNMENT) * ALIGNMENT;

/// Writes the file; returns {headerBytes, fileBytes} (the data section is not written: a hole).
export function writeLlamaGguf(path, m = LLAMA_8B, name = "Llama 3.1 8B Instruct (kvplan web test)") {
  const tensors = llamaTensors(m);
  const w = new Writer();
  w.u32(0x46554747);  // "GGUF"
  w.u32(3);
  w.u64(tensors.length);
  const kvs = [];
  const kvString = (key, value) => kvs.push(() => { w.str(key); w.u32(GGUF_STRING); w.str(value); });
  const kvU32 = (key, value) => kvs.push(() => { w.str(key); w.u32(GGUF_UINT32); w.u32(value); });
  const kvF32 = (key, value) => kvs.push(() => { w.str(key); w.u32(GGUF_FLOAT32); w.f32(value); });
  kvString("general.architecture", "llama");
  kvString("general.name", name);
  kvU32("general.file_type", 15);  // LLAMA_FTYPE_MOSTLY_Q4_K_M
  kvU32("llama.context_length", m.ctx);
  kvU32("llama.embedding_length", m.embd);
  kvU32("llama.block_count", m.layers);
  kvU32("llama.feed_forward_length", m.ff);
  kvU32("llama.rope.dimension_count", m.embd / m.heads);
  kvU32("llama.attention.head_count", m.heads);
  kvU32("llama.attention.head_count_kv", m.kvHeads);
  kvF32("llama.attention.layer_norm_rms_epsilon", 1e-5);
  kvF32("llama.rope.freq_base", 500000);
  kvU32("llama.vocab_size", m.vocab);
  kvString("tokenizer.ggml.model", "gpt2");
  // The vocabulary makes the header a few MiB, as in a real file: more than the page's first slice.
  kvs.push(() => {
    w.str("tokenizer.ggml.tokens"); w.u32(GGUF_ARRAY); w.u32(GGUF_STRING); w.u64(m.vocab);
    for (let i = 0; i < m.vocab; i++) w.str(`tok${i}`);
  });
  kvs.push(() => {
    w.str("tokenizer.ggml.token_type"); w.u32(GGUF_ARRAY); w.u32(GGUF_INT32); w.u64(m.vocab);
    const b = Buffer.alloc(4 * m.vocab);
    for (let i = 0; i < m.vocab; i++) b.writeInt32LE(1, 4 * i);
    w.push(b);
  });
  w.u64(kvs.length);
  for (const write of kvs) write();
  let offset = 0n;
  for (const [tensorName, type, dims] of tensors) {
    w.str(tensorName);
    w.u32(dims.length);
    for (const d of dims) w.u64(d);
    w.u32(type);
    w.u64(offset);
    offset = align(offset + tensorBytes(type, dims));
  }
  const header = w.buffer();
  const dataStart = align(BigInt(header.length));
  const fileBytes = dataStart + offset;
  const fd = fs.openSync(path, "w");
  fs.writeSync(fd, header);
  fs.ftruncateSync(fd, Number(fileBytes));
  fs.closeSync(fd);
  return {headerBytes: header.length, fileBytes};
}
