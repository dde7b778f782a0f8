// The official `openai` client's Responses API (client.responses) against `paddock serve`
// (BASE from run_server_test.sh): create with string and item input, stream, a function call
// round trip through previous_response_id, text.format json_schema, retrieve, errors.
// The fixture model has random weights, so the call and the JSON are forced with tool_choice
// and text.format, which paddock enforces with a grammar (the template's calls are bare JSON).
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { createToolModel } from './tool_model.mjs';

const base = process.env.BASE;
const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused', maxRetries: 0 });
const finished = (r) => ['completed', 'incomplete'].includes(r.status);

// A string input.
const first = await client.responses.create({ model: 'stories:chat', input: 'hi', max_output_tokens: 8 });
assert.equal(first.object, 'response');
assert.match(first.id, /^resp_/);
assert.equal(first.model, 'stories:chat');
assert.ok(finished(first), `status ${first.status}`);
if (first.status === 'incomplete') assert.deepEqual(first.incomplete_details, { reason: 'max_output_tokens' });
const message = first.output.find((i) => i.type === 'message');
assert.ok(message && message.role === 'assistant', JSON.stringify(first.output));
assert.equal(message.content[0].type, 'output_text');
assert.equal(first.output_text, message.content[0].text);
assert.ok(first.usage.input_tokens > 0 && first.usage.output_tokens > 0 && first.usage.output_tokens <= 8,
          JSON.stringify(first.usage));
assert.equal(first.usage.total_tokens, first.usage.input_tokens + first.usage.output_tokens);

// Item input with instructions; the stored response comes back from retrieve().
const items = await client.responses.create({
  model: 'stories:chat', instructions: 'terse', max_output_tokens: 8,
  input: [{ role: 'developer', content: 'no lists' },
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hello there' }] }],
});
assert.ok(finished(items));
assert.equal(items.instructions, 'terse');
assert.ok(items.usage.input_tokens > first.usage.input_tokens, 'the instructions and items reach the prompt');
const retrieved = await client.responses.retrieve(items.id);
assert.equal(retrieved.id, items.id);
assert.deepEqual(retrieved.output, items.output);

// stream(): the typed events in order, and the helper's final response holds the deltas' text.
const stream = client.responses.stream({ model: 'stories:chat', input: 'hi', max_output_tokens: 12 });
let streamed = '';
const events = [];
stream.on('response.output_text.delta', (e) => { streamed += e.delta; });
stream.on('event', (e) => events.push(e));
const final = await stream.finalResponse();
assert.equal(events[0].type, 'response.created');
assert.equal(events[1].type, 'response.in_progress');
assert.ok(['response.completed', 'response.incomplete'].includes(events.at(-1).type), events.at(-1).type);
assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));
for (const t of ['response.output_item.added', 'response.content_part.added', 'response.output_text.done',
                 'response.content_part.done', 'response.output_item.done']) {
  assert.ok(events.some((e) => e.type === t), `no ${t}`);
}
assert.ok(streamed.length > 0);
assert.equal(final.output.find((i) => i.type === 'message').content[0].text, streamed);
const last = events.at(-1).response;
assert.equal(last.output.find((i) => i.type === 'message').content[0].text, streamed);
assert.ok(last.usage.output_tokens > 0 && last.usage.output_tokens <= 12);

// A follow-up through previous_response_id: its prompt holds the first exchange.
const follow = await client.responses.create({
  model: 'stories:chat', previous_response_id: first.id, input: 'and then?', max_output_tokens: 8,
});
assert.equal(follow.previous_response_id, first.id);
assert.ok(follow.usage.input_tokens > first.usage.input_tokens, 'the previous exchange is in the prompt');

// Function calls: stories-tools (tool_model.mjs).
await createToolModel(base);
const tools = [{
  type: 'function', name: 'get_weather', description: 'The weather in a city', strict: true,
  parameters: { type: 'object', properties: { city: { type: 'string', enum: ['Paris', 'Rome'] } },
                required: ['city'], additionalProperties: false },
}];
const call = await client.responses.create({
  model: 'stories-tools', max_output_tokens: 300, tools, tool_choice: { type: 'function', name: 'get_weather' },
  input: 'What is the weather in Paris?',
});
assert.equal(call.status, 'completed', JSON.stringify(call));
const fc = call.output.find((i) => i.type === 'function_call');
assert.ok(fc, JSON.stringify(call.output));
assert.match(fc.id, /^fc_/);
assert.equal(fc.name, 'get_weather');
assert.ok(['Paris', 'Rome'].includes(JSON.parse(fc.arguments).city), fc.arguments);

const reply = await client.responses.create({
  model: 'stories-tools', max_output_tokens: 8, tools, tool_choice: 'none', previous_response_id: call.id,
  input: [{ type: 'function_call_output', call_id: fc.call_id, output: 'sunny, 24 C' }],
});
assert.ok(finished(reply));
assert.ok(reply.output.every((i) => i.type === 'message'), 'tool_choice none: no calls');

// The same round trip with the whole conversation sent as items: the same prompt.
const manual = await client.responses.create({
  model: 'stories-tools', max_output_tokens: 8, tools, tool_choice: 'none', store: false,
  input: [{ role: 'user', content: 'What is the weather in Paris?' },
          { type: 'function_call', call_id: fc.call_id, name: fc.name, arguments: fc.arguments },
          { type: 'function_call_output', call_id: fc.call_id, output: 'sunny, 24 C' }],
});
assert.ok(finished(manual));
assert.equal(manual.usage.input_tokens, reply.usage.input_tokens, 'previous_response_id = the items sent again');
await assert.rejects(client.responses.retrieve(manual.id), (e) => e instanceof OpenAI.NotFoundError);

// A streamed forced call: the arguments arrive as function_call_arguments events.
const callStream = client.responses.stream({
  model: 'stories-tools', max_output_tokens: 300, tools, tool_choice: 'required', input: 'Weather in Rome?',
});
let args = '';
callStream.on('response.function_call_arguments.delta', (e) => { args += e.delta; });
const streamedCall = await callStream.finalResponse();
const streamedFc = streamedCall.output.find((i) => i.type === 'function_call');
assert.ok(streamedFc, JSON.stringify(streamedCall.output));
assert.equal(streamedFc.arguments, args);
assert.ok(['Paris', 'Rome'].includes(JSON.parse(args).city), args);

// text.format json_schema: the output is JSON that follows the schema.
const json = await client.responses.create({
  model: 'stories:chat', max_output_tokens: 300, input: 'Pick a city.',
  text: { format: { type: 'json_schema', name: 'city', strict: true, schema: {
    type: 'object', properties: { city: { type: 'string', enum: ['Paris', 'Rome'] } },
    required: ['city'], additionalProperties: false } } },
});
assert.equal(json.status, 'completed', JSON.stringify(json));
assert.equal(json.text.format.type, 'json_schema');
assert.ok(['Paris', 'Rome'].includes(JSON.parse(json.output_text).city), json.output_text);

// Errors in OpenAI's shape, as the client's typed errors.
await assert.rejects(client.responses.create({ model: 'no-such-model', input: 'hi' }), (e) => {
  assert.ok(e instanceof OpenAI.NotFoundError, String(e));
  assert.match(e.error.message, /not found/);
  return true;
});
await assert.rejects(client.responses.create({ model: 'stories:chat', input: [{ type: 'bogus_item' }] }), (e) => {
  assert.ok(e instanceof OpenAI.BadRequestError, String(e));
  assert.equal(e.error.type, 'invalid_request_error');
  assert.match(e.error.message, /input\[0\]\.type/);
  return true;
});
await assert.rejects(client.responses.create({ model: 'stories:chat', input: 'hi', previous_response_id: 'resp_nope' }),
                     (e) => e instanceof OpenAI.NotFoundError && /resp_nope/.test(e.error.message));
await assert.rejects(client.responses.create({ model: 'stories:chat', input: 'hi', max_output_tokens: 0 }),
                     (e) => e instanceof OpenAI.BadRequestError && /max_output_tokens/.test(e.error.message));
console.log('responses: all checks passed');
