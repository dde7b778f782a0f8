// The official npm clients against `paddock serve` (BASE from run_server_test.sh).
// REGISTRY (host:port of a local docker-registry) enables the pull/push round trip.
import assert from 'node:assert/strict';
import { Ollama } from 'ollama';
import OpenAI from 'openai';

const base = process.env.BASE;
const ollama = new Ollama({ host: base });
const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused' });

const list = await ollama.list();
assert.ok(list.models.some((m) => m.name === 'stories:latest'), 'list has stories:latest');
const show = await ollama.show({ model: 'stories' });
assert.equal(typeof show.modelfile, 'string');
assert.ok(Array.isArray(show.capabilities));
await ollama.copy({ source: 'stories', destination: 'npm-copy' });
await ollama.delete({ model: 'npm-copy' });
const created = await ollama.create({ model: 'npm-made', from: 'stories', system: 'terse', stream: false });
assert.equal(created.status, 'success');
const ps = await ollama.ps();
assert.ok(Array.isArray(ps.models));
await assert.rejects(ollama.show({ model: 'does-not-exist' }), /not found/);

const registry = process.env.REGISTRY;
if (registry) {
  const remote = `${registry}/npm/stories:latest`;
  await ollama.copy({ source: 'stories', destination: remote });
  const statuses = [];
  for await (const p of await ollama.push({ model: remote, insecure: true, stream: true })) statuses.push(p.status);
  assert.equal(statuses.at(-1), 'success');
  assert.ok(statuses.includes('pushing manifest'), `push statuses: ${statuses}`);
  const before = await ollama.show({ model: remote });
  await ollama.delete({ model: remote });
  await assert.rejects(ollama.show({ model: remote }), /not found/);
  let bars = 0;
  for await (const p of await ollama.pull({ model: remote, insecure: true, stream: true })) {
    if (p.digest) {
      assert.ok(p.completed <= p.total, 'completed <= total');
      bars++;
    }
  }
  assert.ok(bars > 0, 'pull reports per-layer progress');
  const after = await ollama.show({ model: remote });
  assert.equal(after.modelfile, before.modelfile);
  assert.equal((await ollama.pull({ model: remote, insecure: true, stream: false })).status, 'success');
  await assert.rejects(ollama.pull({ model: `${registry}/npm/missing`, insecure: true, stream: false }),
                       /file does not exist/);
}

const models = await openai.models.list();
assert.ok(models.data.some((m) => m.id === 'stories:latest'));

const g = await ollama.generate({ model: 'stories', prompt: 'Once', raw: true, options: { num_predict: 8 } });
assert.equal(g.done, true);
let chunks = 0;
for await (const part of await ollama.generate({ model: 'stories', prompt: 'Once', stream: true, options: { num_predict: 8 } })) chunks++;
assert.ok(chunks >= 1);
const c = await ollama.chat({ model: 'stories:chat', messages: [{ role: 'user', content: 'hi' }], options: { num_predict: 8 } });
assert.equal(c.message.role, 'assistant');
for await (const part of await ollama.chat({ model: 'stories:chat', stream: true, messages: [{ role: 'user', content: 'hi' }], options: { num_predict: 8 } })) assert.ok(part.message);
const oc = await openai.chat.completions.create({ model: 'stories:chat', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] });
assert.equal(oc.object, 'chat.completion');
const stream = await openai.chat.completions.create({ model: 'stories:chat', max_tokens: 8, stream: true, messages: [{ role: 'user', content: 'hi' }] });
for await (const chunk of stream) assert.equal(chunk.object, 'chat.completion.chunk');
const comp = await openai.completions.create({ model: 'stories', prompt: 'Once', max_tokens: 8 });
assert.equal(comp.object, 'text_completion');
const emb = await ollama.embed({ model: 'stories', input: ['hello world', 'a cat sat'] });
assert.equal(emb.embeddings.length, 2);
const norm = Math.sqrt(emb.embeddings[0].reduce((a, x) => a + x * x, 0));
assert.ok(Math.abs(norm - 1) < 1e-4, `embeddings are L2-normalised (norm ${norm})`);
assert.notDeepEqual(emb.embeddings[0], emb.embeddings[1]);
const oe = await openai.embeddings.create({ model: 'stories', input: ['hello', 'there'], dimensions: 8 });
assert.equal(oe.data.length, 2);
assert.equal(oe.data[0].embedding.length, 8);
assert.ok(oe.usage.prompt_tokens > 0);
console.log(`clients: all checks passed (registry: ${registry ? 'yes' : 'no'})`);
