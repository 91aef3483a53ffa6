// Runs one turn of an OpenAI Agents SDK agent that has Boris as its MCP server, with the
// SDK's default settings, against the model API at BORIS_E2E_MODEL_URL.
//   BORIS_E2E_SERVER: JSON {"command", "args"} for STDIO, or {"url", "token"} for HTTP
//   BORIS_E2E_API: "responses" or "chat_completions"
// It prints the agent's final output on stdout.
import { Agent, MCPServerStdio, MCPServerStreamableHttp, run, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled } from '@openai/agents';
import OpenAI from 'openai';

const server = JSON.parse(process.env.BORIS_E2E_SERVER);
setTracingDisabled(true);
setOpenAIAPI(process.env.BORIS_E2E_API || 'responses');
setDefaultOpenAIClient(new OpenAI({ apiKey: 'dummy', baseURL: process.env.BORIS_E2E_MODEL_URL }));

const boris = server.url
  ? new MCPServerStreamableHttp({ name: 'boris', url: server.url, requestInit: { headers: { Authorization: `Bearer ${server.token}` } } })
  : new MCPServerStdio({ name: 'boris', command: server.command, args: server.args });
await boris.connect();
try {
  const agent = new Agent({ name: 'Boris e2e', instructions: 'Follow the script.', model: 'boris-e2e-model', mcpServers: [boris] });
  const result = await run(agent, 'Follow the script.', { maxTurns: 50 });
  console.log(result.finalOutput);
} finally {
  await boris.close();
}
