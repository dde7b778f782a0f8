// The official npm clients against `paddock serve` (BASE from run_server_test.sh).
// Store routes always; generation only when the server has the engine ([engine] checks).
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
await assert.rejects(ollama.pull({ model: 'llama3.2', stream: false }), /registry client/);

const models = await openai.models.list();
assert.ok(models.data.some((m) => m.id === 'stories:latest'));

let engine = true;
try {
  await ollama.generate({ model: 'stories', prompt: '', stream: false });
} catch (e) {
  assert.match(String(e), /inference engine not available/);
  engine = false;
}
if (engine) {
  const g = await ollama.generate({ model: 'stories', prompt: 'Once', raw: true, options: { num_predict: 8 } });  // [engine]
  assert.equal(g.done, true);  // [engine]
  let chunks = 0;
  for await (const part of await ollama.generate({ model: 'stories', prompt: 'Once', stream: true, options: { num_predict: 8 } })) chunks++;  // [engine]
  assert.ok(chunks >= 1);  // [engine]
  const c = await ollama.chat({ model: 'stories:chat', messages: [{ role: 'user', content: 'hi' }], options: { num_predict: 8 } });  // [engine]
  assert.equal(c.message.role, 'assistant');  // [engine]
  for await (const part of await ollama.chat({ model: 'stories:chat', stream: true, messages: [{ role: 'user', content: 'hi' }], options: { num_predict: 8 } })) assert.ok(part.message);  // [engine]
  const oc = await openai.chat.completions.create({ model: 'stories:chat', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] });  // [engine]
  assert.equal(oc.object, 'chat.completion');  // [engine]
  const stream = await openai.chat.completions.create({ model: 'stories:chat', max_tokens: 8, stream: true, messages: [{ role: 'user', content: 'hi' }] });  // [engine]
  for await (const chunk of stream) assert.equal(chunk.object, 'chat.completion.chunk');  // [engine]
  const comp = await openai.completions.create({ model: 'stories', prompt: 'Once', max_tokens: 8 });  // [engine]
  assert.equal(comp.object, 'text_completion');  // [engine]
}
console.log(`clients: all checks passed (engine: ${engine})`);
