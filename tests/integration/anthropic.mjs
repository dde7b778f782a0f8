// The official Anthropic client (@anthropic-ai/sdk) against `paddock serve`'s Messages API
// (BASE from run_server_test.sh): create, stream, a tool round trip, count_tokens, errors.
// The fixture model has random weights, so the tool call is forced with tool_choice, which
// paddock enforces with a grammar when the template's tool calls are bare JSON.
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { createToolModel } from './tool_model.mjs';

const base = process.env.BASE;
const client = new Anthropic({ baseURL: base, apiKey: 'unused', maxRetries: 0 });
const user = (content) => ({ role: 'user', content });

const msg = await client.messages.create({ model: 'stories:chat', max_tokens: 8, messages: [user('hi')] });
assert.equal(msg.type, 'message');
assert.equal(msg.role, 'assistant');
assert.match(msg.id, /^msg_/);
assert.equal(msg.model, 'stories:chat');
assert.ok(['end_turn', 'max_tokens'].includes(msg.stop_reason), `stop_reason ${msg.stop_reason}`);
assert.ok(msg.content.every((b) => b.type === 'text'));
assert.ok(msg.usage.input_tokens > 0 && msg.usage.output_tokens > 0 && msg.usage.output_tokens <= 8,
          JSON.stringify(msg.usage));

// stream(): the helper's text events and accumulator agree with each other.
const stream = client.messages.stream({ model: 'stories:chat', max_tokens: 12, system: 'terse', messages: [user('hi')] });
let streamed = '';
const events = [];
stream.on('text', (delta) => { streamed += delta; });
stream.on('streamEvent', (e) => events.push(e.type));
const final = await stream.finalMessage();
assert.equal(events[0], 'message_start');
assert.equal(events.at(-1), 'message_stop');
assert.ok(events.includes('message_delta'));
assert.equal(final.content.filter((b) => b.type === 'text').map((b) => b.text).join(''), streamed);
assert.ok(final.usage.output_tokens > 0 && final.usage.output_tokens <= 12);
assert.ok(['end_turn', 'max_tokens'].includes(final.stop_reason));

const short = await client.messages.countTokens({ model: 'stories:chat', messages: [user('hi')] });
const long = await client.messages.countTokens({ model: 'stories:chat', system: 'a longer system prompt',
                                                 messages: [user('hi there, how are you today?')] });
assert.ok(short.input_tokens > 0, JSON.stringify(short));
assert.ok(long.input_tokens > short.input_tokens, `${long.input_tokens} > ${short.input_tokens}`);

// Tools: stories-tools (tool_model.mjs).
await createToolModel(base);
const tools = [{
  name: 'get_weather',
  description: 'The weather in a city',
  input_schema: { type: 'object', properties: { city: { type: 'string', enum: ['Paris', 'Rome'] } },
                  required: ['city'], additionalProperties: false },
}];
const ask = [user('What is the weather in Paris?')];
const call = await client.messages.create({
  model: 'stories-tools', max_tokens: 300, tools, tool_choice: { type: 'tool', name: 'get_weather' }, messages: ask,
});
assert.equal(call.stop_reason, 'tool_use', JSON.stringify(call));
const use = call.content.find((b) => b.type === 'tool_use');
assert.ok(use, JSON.stringify(call.content));
assert.match(use.id, /^toolu_/);
assert.equal(use.name, 'get_weather');
assert.ok(['Paris', 'Rome'].includes(use.input.city), JSON.stringify(use.input));

const reply = await client.messages.create({
  model: 'stories-tools', max_tokens: 8, tools, tool_choice: { type: 'none' },
  messages: [...ask, { role: 'assistant', content: call.content },
             user([{ type: 'tool_result', tool_use_id: use.id, content: 'sunny, 24 C' }])],
});
assert.equal(reply.type, 'message');
assert.ok(reply.content.every((b) => b.type === 'text'), 'tool_choice none: no calls');
assert.notEqual(reply.stop_reason, 'tool_use');

// A streamed forced call: the accumulator parses input_json_delta into `input`.
const streamedCall = await client.messages.stream({
  model: 'stories-tools', max_tokens: 300, tools, tool_choice: { type: 'any' }, messages: ask,
}).finalMessage();
assert.equal(streamedCall.stop_reason, 'tool_use');
const streamedUse = streamedCall.content.find((b) => b.type === 'tool_use');
assert.ok(streamedUse && ['Paris', 'Rome'].includes(streamedUse.input.city), JSON.stringify(streamedCall.content));

// Errors in Anthropic's shape, as the SDK's typed errors.
await assert.rejects(client.messages.create({ model: 'stories:chat', messages: [user('hi')] }), (e) => {
  assert.ok(e instanceof Anthropic.BadRequestError, String(e));
  assert.equal(e.error.type, 'error');
  assert.equal(e.error.error.type, 'invalid_request_error');
  assert.match(e.error.error.message, /max_tokens/);
  return true;
});
await assert.rejects(client.messages.create({ model: 'no-such-model', max_tokens: 8, messages: [user('hi')] }), (e) => {
  assert.ok(e instanceof Anthropic.NotFoundError, String(e));
  assert.equal(e.error.error.type, 'not_found_error');
  return true;
});
await assert.rejects(client.messages.create({
  model: 'stories:chat', max_tokens: 8,
  messages: [user([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }])],
}), (e) => e instanceof Anthropic.BadRequestError && /not supported yet/.test(e.error.error.message));
console.log('anthropic: all checks passed');
