'use strict';
// The HTTP API (uvicorn + FastAPI in SGLang), node:http. Listens only once the model is loaded.
const http = require('http');
const oa = require('./openai');
const model = require('./model');
const { postProcessChat } = require('./parsers');
const faults = require('./faults');
const { logChatRequest } = require('./requestLog');
const tokenizer = require('./tokenizer');

/** A stream chunk that carries reasoning (SGLang's reasoning_content, vLLM's reasoning). */
function isReasoningChunk(chunk) {
  const choice = chunk && Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
  const delta = (choice && choice.delta) || {};
  return Boolean(delta.reasoning_content || delta.reasoning);
}

const GEN_ROUTES = new Set(['/generate', '/v1/completions', '/v1/chat/completions']);
const JSON_HDR = { 'content-type': 'application/json' };
const MAX_REQ_BODY = 8 << 20;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

class HttpApi {
  /**
   * @param {object} sim {args, cfg, log, state():'warming'|'ready', engineWarm:Promise, serverInfo(), modelInfo(), onRequest?}
   */
  constructor(sim) {
    this.sim = sim;
    this.sockets = new Set();
    this.healthCount = 0;
    this.server = http.createServer((req, res) =>
      this._handle(req, res).catch((e) => {
        if (!res.headersSent) this._json(req, res, 500, oa.errorBody(`Internal server error: ${e.message}`, 500));
        else res.destroy();
      }),
    );
    this.server.keepAliveTimeout = 5000;
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  listen(host, port) {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  close() {
    try {
      this.server.close();
    } catch {
      /* not listening */
    }
    for (const s of this.sockets) s.destroy();
  }

  // --- helpers -------------------------------------------------------------
  _head(req, res, status, headers) {
    res.writeHead(status, { date: new Date().toUTCString(), server: 'uvicorn', ...headers });
    this.sim.log.access(`${req.socket.remoteAddress}:${req.socket.remotePort}`, req.method, req.url, status);
  }

  _json(req, res, status, obj, contentType = 'application/json') {
    const body = Buffer.from(JSON.stringify(obj));
    this._head(req, res, status, { 'content-type': contentType, 'content-length': body.length });
    res.end(body);
  }

  _empty(req, res, status) {
    this._head(req, res, status, { 'content-length': 0 });
    res.end();
  }

  _readBody(req) {
    return new Promise((resolve, reject) => {
      const parts = [];
      let n = 0;
      req.on('data', (c) => {
        n += c.length;
        if (n > MAX_REQ_BODY) {
          reject(Object.assign(new Error('request body too large'), { status: 413 }));
          req.destroy();
        } else parts.push(c);
      });
      req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
      req.on('error', reject);
    });
  }

  async _jsonBody(req, res) {
    const text = await this._readBody(req);
    try {
      const v = JSON.parse(text);
      if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('expected a JSON object');
      return v;
    } catch (e) {
      this._json(
        req,
        res,
        400,
        oa.errorBody(
          `[{'type': 'json_invalid', 'loc': ('body', 0), 'msg': 'JSON decode error', 'input': {}, 'ctx': {'error': '${e.message.replace(/'/g, '')}'}}]`,
        ),
      );
      return null;
    }
  }

  _fault(path) {
    const f = this.sim.cfg.fault || {};
    if (!f.http || this.sim.state() !== 'ready') return null;
    if (Array.isArray(f.httpPaths) && !f.httpPaths.includes(path)) return null;
    const h = f.http;
    if (h === 'errorWithChoices' || h === 'emptyChoices')
      return GEN_ROUTES.has(path) && path !== '/generate' ? h : null;
    if (h === 'healthFlapping') return path === '/health' || path === '/health_generate' ? h : null;
    return h;
  }

  async _sendFault(req, res, fault, path) {
    const name = this.sim.args.served_model_name;
    switch (fault) {
      case 'hang':
        return; // accept, read nothing more, never answer
      case 'html500': {
        const body =
          '<html>\r\n<head><title>500 Internal Server Error</title></head>\r\n<body>\r\n<center><h1>500 Internal Server Error</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';
        this._head(req, res, 500, { 'content-type': 'text/html', 'content-length': Buffer.byteLength(body) });
        return res.end(body);
      }
      case 'truncatedJson': {
        const full = JSON.stringify(
          oa.completion(' Paris. It is', 'length', { model: name, promptTokens: 3, completionTokens: 3 }),
        );
        const body = full.slice(0, Math.floor(full.length / 2));
        this._head(req, res, 200, { ...JSON_HDR, 'content-length': Buffer.byteLength(body) });
        return res.end(body);
      }
      case 'hugeBody':
        return this._huge(req, res);
      case 'wrongContentType': {
        const body = JSON.stringify(
          oa.completion(' Paris. It is', 'length', { model: name, promptTokens: 3, completionTokens: 3 }),
        );
        this._head(req, res, 200, {
          'content-type': 'text/plain; charset=utf-8',
          'content-length': Buffer.byteLength(body),
        });
        return res.end(body);
      }
      case 'errorWithChoices':
        return this._json(
          req,
          res,
          400,
          oa.errorBody(
            'Invalid request: the number of choices n=1 is not supported while the server is draining; choices must be retried later.',
          ),
        );
      case 'emptyChoices': {
        const obj =
          path === '/v1/chat/completions'
            ? {
                ...oa.chatCompletion(
                  { content: '', finishReason: 'stop' },
                  { model: name, promptTokens: 3, completionTokens: 0 },
                ),
                choices: [],
              }
            : { ...oa.completion('', 'stop', { model: name, promptTokens: 3, completionTokens: 0 }), choices: [] };
        return this._json(req, res, 200, obj);
      }
      case 'healthFlapping':
        return this._empty(req, res, this.healthCount++ % 2 === 0 ? 200 : 503);
      default:
        return null;
    }
  }

  _huge(req, res) {
    const prefix = '{"id":"x","object":"text_completion","created":0,"model":"m","choices":[{"index":0,"text":"';
    const suffix = '","logprobs":null,"finish_reason":"length","matched_stop":null}],"usage":null}';
    const total = 20 * 1024 * 1024;
    const chunk = Buffer.alloc(64 * 1024, 'A');
    const fill = total - prefix.length - suffix.length;
    this._head(req, res, 200, { ...JSON_HDR, 'content-length': total });
    res.write(prefix);
    let left = fill;
    const pump = () => {
      while (left > 0) {
        const n = Math.min(left, chunk.length);
        left -= n;
        if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          res.once('drain', pump);
          return;
        }
      }
      res.end(suffix);
    };
    res.on('close', () => {
      left = 0;
    });
    pump();
  }

  /** wait for the engine (queued while warming up); then pretend to compute */
  async _generateDelay(tokens) {
    await this.sim.engineWarm;
    const ms = Math.min(2000, tokens * (this.sim.cfg.tokenDelayMs || 0));
    if (ms > 0) await sleep(ms);
  }

  _checkModel(req, res, body) {
    const name = this.sim.args.served_model_name;
    if (body.model != null && body.model !== name) {
      this._json(req, res, 404, oa.errorBody(`The model \`${body.model}\` does not exist.`, 404));
      return false;
    }
    return true;
  }

  /** `o.reasoningMs`: the delay after each chunk of reasoning (chatFaults slowReasoningMs), else tokenDelayMs. */
  async _sse(req, res, chunks, o = {}) {
    this._head(req, res, 200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    let closed = false;
    res.on('close', () => {
      closed = true;
    });
    for (const c of chunks) {
      if (closed) return;
      res.write(`data: ${JSON.stringify(c)}\n\n`);
      const ms = o.reasoningMs && isReasoningChunk(c) ? o.reasoningMs : this.sim.cfg.tokenDelayMs;
      if (ms) await sleep(ms);
    }
    if (!closed) res.end('data: [DONE]\n\n');
  }

  /** A plain answer of slow reasoning (chatFaults slowReasoningMs) comes once every reasoning token is done. */
  async _reasoningDelay(cf, reasoning) {
    const ms = faults.reasoningTokenMs(cf);
    if (ms > 0 && reasoning) await sleep(ms * model.tokenize(reasoning).length);
  }

  /**
   * SGLang's --api-key middleware (python/sglang/srt/utils/auth.py: decide_request_auth, from
   * add_api_key_middleware): OPTIONS and every path starting with /health or /metrics pass (so
   * /health_generate too); anything else needs `Authorization: Bearer KEY` (split at the first
   * space, the scheme case-insensitive, the token compared exactly). It runs before routing, so
   * unknown paths are refused too. An empty key is no key (Python's `if api_key:`).
   */
  _authorized(req, path) {
    const key = this.sim.args.api_key;
    if (key == null || key === '') return true;
    if (req.method === 'OPTIONS') return true;
    if (path.startsWith('/health') || path.startsWith('/metrics')) return true;
    const h = req.headers.authorization;
    if (!h) return false;
    const i = h.indexOf(' ');
    if (i < 0) return false;
    return h.slice(0, i).toLowerCase() === 'bearer' && h.slice(i + 1) === key;
  }

  // --- routing -------------------------------------------------------------
  async _handle(req, res) {
    const url = new URL(req.url, 'http://x');
    const path = url.pathname;
    const sim = this.sim;
    // the middleware's refusal: ORJSONResponse({"error": "Unauthorized"}, status_code=401)
    if (!this._authorized(req, path)) return this._json(req, res, 401, { error: 'Unauthorized' });
    const fault = this._fault(path);
    if (fault) {
      await this._sendFault(req, res, fault, path);
      return;
    }
    const get = req.method === 'GET' || req.method === 'HEAD';
    const post = req.method === 'POST';
    const notAllowed = () => this._json(req, res, 405, { detail: 'Method Not Allowed' });
    switch (path) {
      case '/health':
      case '/health_generate': {
        if (!get && !post) return notAllowed();
        if (sim.state() === 'ready') return this._empty(req, res, 200);
        if (sim.cfg.legacyHealth) {
          if (path === '/health') return this._empty(req, res, 200);
          await sim.engineWarm;
          return this._empty(req, res, 200);
        }
        return this._empty(req, res, 503);
      }
      case '/ping':
        return this._empty(req, res, 200);
      case '/v1/models':
        if (!get) return notAllowed();
        return this._json(
          req,
          res,
          200,
          oa.modelsList(sim.args.served_model_name, sim.startedAt, sim.cfg.contextLength),
        );
      case '/model_info':
      case '/get_model_info':
        if (!get) return notAllowed();
        return this._json(req, res, 200, sim.modelInfo());
      case '/server_info':
      case '/get_server_info':
        if (!get) return notAllowed();
        return this._json(req, res, 200, sim.serverInfo());
      case '/generate':
        if (!post) return notAllowed();
        return this._generate(req, res);
      case '/v1/completions':
        if (!post) return notAllowed();
        return this._completions(req, res);
      case '/v1/chat/completions':
        if (!post) return notAllowed();
        return this._chat(req, res);
      case '/tokenize': {
        if (!post) return notAllowed();
        const body = await this._jsonBody(req, res);
        if (!body) return;
        const [status, out] = tokenizer.tokenizeRoute(body, sim.args.tokenizer_path, sim.cfg.contextLength || 262144);
        return this._json(req, res, status, out);
      }
      default:
        if (path.startsWith('/v1/models/') && get) {
          const id = decodeURIComponent(path.slice('/v1/models/'.length));
          if (id === sim.args.served_model_name)
            return this._json(req, res, 200, oa.modelsList(id, sim.startedAt, sim.cfg.contextLength).data[0]);
          return this._json(req, res, 404, oa.errorBody(`The model \`${id}\` does not exist.`, 404));
        }
        return this._json(req, res, 404, { detail: 'Not Found' });
    }
  }

  async _generate(req, res) {
    const body = await this._jsonBody(req, res);
    if (!body) return;
    const sim = this.sim;
    if (sim.hooks && sim.hooks.beforeGenerate) {
      const r = await sim.hooks.beforeGenerate(req, body);
      if (r === 'fail') return this._json(req, res, 500, { detail: 'Internal Server Error' });
    }
    const sp = body.sampling_params || {};
    const max = sp.max_new_tokens != null ? sp.max_new_tokens : 128;
    const t0 = Date.now();
    const out = model.truncateTokens(model.completionRawOutput(body.text), max);
    await this._generateDelay(out.tokens);
    const meta = {
      promptTokens: model.promptTokens(body),
      completionTokens: out.tokens,
      latency: (Date.now() - t0) / 1000,
    };
    this._json(req, res, 200, oa.generateResponse(out.text, out.truncated ? 'length' : 'stop', meta));
  }

  async _completions(req, res) {
    const body = await this._jsonBody(req, res);
    if (!body) return;
    if (!this._checkModel(req, res, body)) return;
    if (body.prompt == null)
      return this._json(
        req,
        res,
        400,
        oa.errorBody("[{'type': 'missing', 'loc': ('body', 'prompt'), 'msg': 'Field required'}]"),
      );
    const max = body.max_tokens != null ? body.max_tokens : 16;
    if (!Number.isInteger(max) || max < 0)
      return this._json(req, res, 400, oa.errorBody('max_tokens must be a non-negative integer'));
    const prompt = Array.isArray(body.prompt) ? body.prompt.join(' ') : String(body.prompt);
    const out = model.truncateTokens(model.completionRawOutput(prompt), max);
    const finish = out.truncated ? 'length' : 'stop';
    const meta = {
      model: this.sim.args.served_model_name,
      promptTokens: model.promptTokens(body),
      completionTokens: out.tokens,
      includeUsage: !!(body.stream_options && body.stream_options.include_usage),
    };
    await this._generateDelay(body.stream ? 0 : out.tokens);
    if (body.stream) return this._sse(req, res, oa.completionStreamChunks(out.text, finish, meta));
    this._json(req, res, 200, oa.completion(out.text, finish, meta));
  }

  async _chat(req, res) {
    const body = await this._jsonBody(req, res);
    if (!body) return;
    if (!this._checkModel(req, res, body)) return;
    if (!Array.isArray(body.messages) || !body.messages.length) {
      return this._json(
        req,
        res,
        400,
        oa.errorBody("[{'type': 'missing', 'loc': ('body', 'messages'), 'msg': 'Field required'}]"),
      );
    }
    const args = this.sim.args;
    const max = body.max_completion_tokens != null ? body.max_completion_tokens : body.max_tokens;
    if (max != null && (!Number.isInteger(max) || max < 0))
      return this._json(req, res, 400, oa.errorBody('max_tokens must be a non-negative integer'));
    logChatRequest(this.sim.root, body);
    const images = tokenizer.chatImages(body.messages);
    const vision = tokenizer.isVisionModel(args.model_path);
    if (images.length && !vision)
      return this._json(
        req,
        res,
        400,
        oa.errorBody(`${args.served_model_name} is not a multimodal model: image_url content is not supported.`),
      );
    const cf = faults.chatFaults(this.sim);
    const raw =
      images.length && vision && !(Array.isArray(body.tools) && body.tools.length)
        ? `<think>The user sent ${images.length} image(s).</think>I see ${images.length} image(s): ${images.join(', ')}.`
        : model.chatRawOutput(body, { ...(this.sim.cfg.fault || {}), ...cf, ...faults.slowReasoning(cf, max) });
    const out = model.truncateTokens(raw, max);
    const thinking = !(body.chat_template_kwargs && body.chat_template_kwargs.thinking === false);
    const hasTools = Array.isArray(body.tools) && body.tools.length > 0 && body.tool_choice !== 'none';
    const parsed = postProcessChat(out.text, {
      reasoningParser: args.reasoning_parser,
      toolCallParser: args.tool_call_parser,
      hasTools,
      thinking: faults.parserThinking(cf, thinking),
      separateReasoning: faults.separatesReasoning(cf, body) ? body.separate_reasoning : false,
      historyToolCalls: model.historyToolCalls(body.messages),
      finishReason: out.truncated ? 'length' : 'stop',
    });
    const r = parsed.toolCalls ? { ...parsed, toolCalls: faults.faultyCalls(cf, parsed.toolCalls, 'sglang') } : parsed;
    const meta = {
      model: args.served_model_name,
      promptTokens: model.promptTokens(body),
      completionTokens: out.tokens,
      reasoningTokens: r.reasoning ? model.tokenize(r.reasoning).length : 0,
      includeUsage: !!(body.stream_options && body.stream_options.include_usage),
    };
    await this._generateDelay(body.stream ? 0 : out.tokens);
    if (body.stream)
      return this._sse(
        req,
        res,
        oa.chatStreamChunks(faults.streamedResult(cf, r), meta, { nullKeys: !!this.sim.cfg.streamNullKeys }),
        { reasoningMs: faults.reasoningTokenMs(cf) },
      );
    await this._reasoningDelay(cf, r.reasoning);
    this._json(req, res, 200, oa.chatCompletion(r, meta));
  }
}

module.exports = { HttpApi };
