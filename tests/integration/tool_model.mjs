// A model for tool-call tests: the stories fixture with a template that renders tools and
// writes calls as bare JSON (so grammar-forced output parses as a call), created once per
// server as "stories-tools".
import assert from 'node:assert/strict';

export async function createToolModel(base) {
  const template = '{{ if .Tools }}<|im_start|>system\n{{ json .Tools }}<|im_end|>\n{{ end }}' +
    '{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}{{ if .ToolCalls }}{{ range .ToolCalls }}' +
    '{{ json .Function }}{{ end }}{{ end }}<|im_end|>\n{{ end }}<|im_start|>assistant\n';
  const created = await fetch(`${base}/api/create`, {
    method: 'POST',
    body: JSON.stringify({ model: 'stories-tools', from: 'stories', template, parameters: { num_ctx: 1024 }, stream: false }),
  });
  assert.equal(created.status, 200, await created.clone().text());
  return 'stories-tools';
}
