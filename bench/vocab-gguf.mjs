// SPDX-License-Identifier: Apache-2.0
// vocab-gguf.mjs GGUF VRAMFIT_JSON - issue 21: one of the vocab GGUFs of llama.cpp's models/
// folder against `vramfit inspect --json`: architecture, context, dimensions and vocab as the npm
// parser (@huggingface/gguf) reads them, and the f16 KV bytes per token that llama.cpp allocates,
// derived here from the metadata alone: per layer n_head_kv(il) x (n_embd_head_k(il) +
// n_embd_head_v(il)) x 2 B, the head sizes key_length / value_length (else n_embd / n_head) and
// on sliding-window layers key_length_swa / value_length_swa; a non-causal model (attention.causal
// false: BERT-style embedders) gets no KV cache at all. Prints one JSON line; exit 1 on a mismatch.
import {gguf} from "@huggingface/gguf";
import fs from "node:fs";

const [file, vfJson] = process.argv.slice(2);
const {metadata: md} = await gguf(file, {allowLocalFile: true});
const arch = md["general.architecture"];
const k = (s) => md[`${arch}.${s}`];
const num = (v) => (v === undefined ? undefined : Number(v));
const at = (v, i) => (Array.isArray(v) ? num(v[i]) : num(v));
const maxOf = (v) => (Array.isArray(v) ? Math.max(...v.map(Number)) : num(v));

const nLayer = num(k("block_count"));
const nEmbd = num(k("embedding_length"));
const headKv = k("attention.head_count_kv") ?? k("attention.head_count");
const pattern = k("attention.sliding_window_pattern");
let kv = 0;
if (k("attention.causal") !== false) {
    for (let il = 0; il < nLayer; il++) {
        const nHead = at(k("attention.head_count"), il);
        const swa = Array.isArray(pattern) && pattern[il] === true;
        let hk = num(k("attention.key_length")) ?? nEmbd / nHead;
        let hv = num(k("attention.value_length")) ?? hk;
        if (swa && k("attention.key_length_swa") !== undefined) {
            hk = num(k("attention.key_length_swa"));
            hv = num(k("attention.value_length_swa")) ?? hk;
        }
        kv += at(headKv, il) * (hk + hv) * 2;
    }
}
const want = {
    architecture: arch.replaceAll("-", "_"),
    max_ctx_tokens: num(k("context_length")),
    layers: nLayer,
    hidden: nEmbd,
    heads: maxOf(k("attention.head_count")),
    kv_heads: maxOf(headKv),
    vocab: md["tokenizer.ggml.tokens"]?.length ?? num(k("vocab_size")),
    kv_bytes_per_token: kv,
};
// llama.cpp's architecture names where Hugging Face's model_type (what vramfit prints) differs
const hfName = {command_r: "cohere"};
const j = JSON.parse(fs.readFileSync(vfJson, "utf8"));
const got = {...want};
for (const key of Object.keys(want)) got[key] = key === "architecture" ? j.model_type : j[key];
const bad = Object.keys(want).filter((key) =>
    key === "architecture" ? got[key] !== want[key] && got[key] !== hfName[want[key]] : got[key] !== want[key]);
console.log(JSON.stringify({file: file.split("/").pop(), want, bad: bad.map((b) => `${b}: ${got[b]} != ${want[b]}`)}));
process.exit(bad.length ? 1 : 0);
