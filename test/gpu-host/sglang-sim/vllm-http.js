'use strict';
// vLLM's HTTP API (docs/vllm-server.md §4–§6): up only once the engine is loaded; /health 200
// while the engine lives, 503 once it is dead; no /server_info, /model_info or /generate (404);
// --api-key guards /v1/* only (AuthenticationMiddleware).
const { HttpApi } = require('./http');
const model = require('./model');
const vo = require('./vllm-openai');
const faults = require('./faults');
const { logChatRequest } = require('./requestLog');
const tokenizer = require('./tokenizer');

class VllmHttpApi extends HttpApi {
  _authorized(req, path) {
    const key = this.sim.args.api_key;
    if (!key || req.method === 'OPTIONS' || !path.startsWith('/v1')) return true;
    return req.headers.authorization === `Bearer ${key}`;
  }

  async _handle(req, res) {
    const path = new URL(req.url, 'http://x').pathname;
    const sim = this.sim;
    if (!this._authorized(req, path)) return this._json(req, res, 401, { error: 'Unauthorized' });
    const get = req.method === 'GET' || req.method === 'HEAD';
    const post = req.method === 'POST';
    const notAllowed = () => this._json(req, res, 405, { detail: 'Method Not Allowed' });
    switch (path) {
      case '/health':
        if (!get) return notAllowed();
        return this._empty(req, res, sim.engineDead ? 503 : 200);
      case '/ping':
        if (!get && !post) return notAllowed();
        return this._empty(req, res, sim.engineDead ? 503 : 200);
      case '/version':
        return this._json(req, res, 200, { version: sim.cfg.vllmVersion });
      case '/v1/models':
        if (!get) return notAllowed();
        return this._json(
          req,
          res,
          200,
          vo.modelsList(sim.args.served_model_name, sim.args.model, sim.startedAt, sim.maxModelLen()),
        );
      case '/v1/completions':
        if (!post) return notAllowed();
        return this._vllmCompletions(req, res);
      case '/v1/chat/completions':
        if (!post) return notAllowed();
        return this._vllmChat(req, res);
      case '/tokenize': {
        if (!post) return notAllowed();
        const body = await this._jsonBody(req, res);
        if (!body) return;
        const [status, out] = tokenizer.tokenizeRoute(body, sim.args.model, sim.maxModelLen());
        return this._json(req, res, status, out);
      }
      default:
        return this._json(req, res, 404, { detail: 'Not Found' });
    }
  }

  _vllmModelOk(req, res, body) {
    if (body.model == null || body.model === this.sim.args.served_model_name) return true;
    this._json(req, res, 404, vo.errorBody(`The model \`${body.model}\` does not exist.`, 404));
    return false;
  }

  /** A dead engine answers generation with 500 (EngineDeadError), as AsyncLLM does. */
  _deadEngine(req, res) {
    if (!this.sim.engineDead) return false;
    this._json(
      req,
      res,
      500,
      vo.errorBody('EngineCore encountered an issue. See stack trace (above) for the root cause.', 500),
    );
    return true;
  }

  async _vllmCompletions(req, res) {
    const body = await this._jsonBody(req, res);
    if (!body || !this._vllmModelOk(req, res, body) || this._deadEngine(req, res)) return;
    if (body.prompt == null)
      return this._json(req, res, 400, vo.errorBody('Either prompt or prompt_embeds must be provided and non-empty.'));
    const max = body.max_tokens != null ? body.max_tokens : 16;
    const prompt = Array.isArray(body.prompt) ? body.prompt.join(' ') : String(body.prompt);
    const out = model.truncateTokens(model.completionRawOutput(prompt), max);
    await this._generateDelay(out.tokens);
    this._json(
      req,
      res,
      200,
      vo.completion(out.text, out.truncated ? 'length' : 'stop', {
        model: this.sim.args.served_model_name,
        promptTokens: model.promptTokens(body),
        completionTokens: out.tokens,
      }),
    );
  }

  async _vllmChat(req, res) {
    const body = await this._jsonBody(req, res);
    if (!body || !this._vllmModelOk(req, res, body) || this._deadEngine(req, res)) return;
    if (!Array.isArray(body.messages) || !body.messages.length)
      return this._json(req, res, 400, vo.errorBody('messages: Field required'));
    const args = this.sim.args;
    const hasTools = Array.isArray(body.tools) && body.tools.length > 0;
    // protocol.py: tool_choice defaults to "auto" when tools are given
    const toolChoice = body.tool_choice != null ? body.tool_choice : hasTools ? 'auto' : 'none';
    if (toolChoice === 'auto' && !(args.enable_auto_tool_choice && args.tool_call_parser)) {
      return this._json(
        req,
        res,
        400,
        vo.errorBody('"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'),
      );
    }
    const max = body.max_completion_tokens != null ? body.max_completion_tokens : body.max_tokens;
    logChatRequest(this.sim.root, body);
    const cf = faults.chatFaults(this.sim);
    const out = model.truncateTokens(
      model.chatRawOutput(body, { ...(this.sim.cfg.fault || {}), ...cf, ...faults.slowReasoning(cf, max) }),
      max,
    );
    const thinking = !(body.chat_template_kwargs && body.chat_template_kwargs.thinking === false);
    const forced = hasTools && (toolChoice === 'required' || (toolChoice && typeof toolChoice === 'object'));
    const parsed = vo.postProcess(out.text, {
      reasoningParser: faults.separatesReasoning(cf, body) ? args.reasoning_parser : null,
      toolCallParser: args.tool_call_parser,
      autoTools: hasTools && toolChoice === 'auto',
      forcedTools: forced ? toolChoice : null,
      thinking: faults.parserThinking(cf, thinking),
      finishReason: out.truncated ? 'length' : 'stop',
    });
    const r = { ...parsed, toolCalls: faults.faultyCalls(cf, parsed.toolCalls, 'vllm') };
    const meta = {
      model: args.served_model_name,
      promptTokens: model.promptTokens(body),
      completionTokens: out.tokens,
      reasoningField: this.sim.cfg.vllmReasoningField,
      includeUsage: !!(body.stream_options && body.stream_options.include_usage),
    };
    await this._generateDelay(body.stream ? 0 : out.tokens);
    if (body.stream)
      return this._sse(req, res, vo.chatStreamChunks(faults.streamedResult(cf, r), meta), {
        reasoningMs: faults.reasoningTokenMs(cf),
      });
    await this._reasoningDelay(cf, r.reasoning);
    this._json(req, res, 200, vo.chatCompletion(r, meta));
  }
}

module.exports = { VllmHttpApi };
