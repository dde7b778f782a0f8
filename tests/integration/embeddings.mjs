// Embedding models (bert, nomic-bert) through `paddock serve` (BASE from run_server_test.sh)
// with the official npm clients: the model is created from its GGUF over /api/blobs, its
// vectors through /api/embed (ollama) and /v1/embeddings (openai) equal `paddock eval`'s
// (cosine >= 0.9999), it shows the embedding capability only, and generating with it fails
// as Ollama's does.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Ollama } from 'ollama';
import OpenAI from 'openai';

const base = process.env.BASE;
const fixtures = process.env.PADDOCK_FIXTURES;
const ollama = new Ollama({ host: base });
const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused' });

const cosine = (a, b) => {
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; ++i) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / Math.sqrt(na * nb);
};

// The prompts of the golden file, embedded by `paddock eval` (the ref backend).
function evalEmbeddings(gguf, golden) {
  const out = execFileSync(process.env.PADDOCK_BIN, ['eval', '--model', gguf, '--teacher-force', golden, '--json']);
  return out.toString().trim().split('\n').map((l) => JSON.parse(l));
}

for (const name of ['tiny-bert-f16', 'tiny-nomic-bert-f16']) {
  const gguf = `${fixtures}/models/${name}.gguf`;
  const bytes = readFileSync(gguf);
  const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  const put = await fetch(`${base}/api/blobs/${digest}`, { method: 'POST', body: bytes });
  assert.ok(put.ok, `blob upload: ${put.status}`);
  const created = await ollama.create({ model: name, files: { [`${name}.gguf`]: digest }, stream: false });
  assert.equal(created.status, 'success');
  assert.ok((await ollama.list()).models.some((m) => m.name === `${name}:latest`), 'listed once created');

  const show = await ollama.show({ model: name });
  assert.deepEqual(show.capabilities, ['embedding'], `${name} capabilities`);

  const want = evalEmbeddings(gguf, `${fixtures}/golden/${name}.embed.jsonl`);
  const prompts = want.map((w) => w.prompt);
  const got = await ollama.embed({ model: name, input: prompts });
  assert.equal(got.embeddings.length, prompts.length);
  assert.equal(got.prompt_eval_count, want.reduce((n, w) => n + w.ids.length, 0), 'prompt_eval_count counts [CLS]/[SEP]');
  const viaOpenAI = await openai.embeddings.create({ model: name, input: prompts });
  assert.equal(viaOpenAI.data.length, prompts.length);
  for (let i = 0; i < prompts.length; ++i) {
    const c1 = cosine(got.embeddings[i], want[i].embedding);
    const c2 = cosine(viaOpenAI.data[i].embedding, want[i].embedding);
    assert.ok(c1 >= 0.9999 && c2 >= 0.9999, `${name} "${prompts[i]}": cosine ${c1} (ollama), ${c2} (openai)`);
  }
  const legacy = await ollama.embeddings({ model: name, prompt: prompts[0] });
  assert.ok(cosine(legacy.embedding, want[0].embedding) >= 0.9999, 'legacy /api/embeddings');

  const short = await openai.embeddings.create({ model: name, input: 'hello', dimensions: 16 });
  assert.equal(short.data[0].embedding.length, 16);
  const norm = Math.sqrt(short.data[0].embedding.reduce((a, x) => a + x * x, 0));
  assert.ok(Math.abs(norm - 1) < 1e-4, `dimensions: re-normalised (norm ${norm})`);

  // Longer than the context (512 for tiny-bert, 2048 for nomic): cut, or a 400 with truncate:false.
  const long = 'word '.repeat(3000);
  const cut = await ollama.embed({ model: name, input: long });
  assert.equal(cut.embeddings.length, 1);
  const arch = show.model_info['general.architecture'];
  assert.equal(cut.prompt_eval_count, show.model_info[`${arch}.context_length`], 'cut to the context length');
  await assert.rejects(ollama.embed({ model: name, input: long, truncate: false }), /exceeds the context length/);

  await assert.rejects(ollama.generate({ model: name, prompt: 'hi' }), new RegExp(`"${name}" does not support generate`));
  await assert.rejects(ollama.chat({ model: name, messages: [{ role: 'user', content: 'hi' }] }),
    new RegExp(`"${name}" does not support chat`));
}
console.log('embedding models: ok');
