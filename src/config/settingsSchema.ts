/** The JSON schema of the `kimiService.*` settings (their shape), and its errors in the user's words. */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { SECTION } from './namespace';
import {
  settingInvalid,
  settingMissing,
  settingNotOneOf,
  settingUnknownField,
} from '../present/words/serverSettingsWords';

/** Where one server (or one node of a multi-node server) runs, and how it is reached. */
const connectionProperties = {
  host: { type: 'string', minLength: 1, maxLength: 253 },
  port: { type: 'integer', minimum: 1, maximum: 65535 },
  username: { type: 'string', minLength: 1, maxLength: 64 },
  identityFile: { type: 'string', minLength: 1, maxLength: 4096 },
  unit: { type: 'string', minLength: 1, maxLength: 256 },
} as const;

const nodeSchema = {
  type: 'object',
  required: ['host', 'unit'],
  additionalProperties: false,
  properties: connectionProperties,
} as const;

/** host and unit (or container, compose) are required unless `nodes` is given (checked in validateServer). */
const serverSchema = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 64 },
    ...connectionProperties,
    container: { type: 'string', minLength: 1, maxLength: 128 },
    compose: {
      type: 'object',
      required: ['file', 'service'],
      additionalProperties: false,
      properties: {
        file: { type: 'string', minLength: 1, maxLength: 4096 },
        service: { type: 'string', minLength: 1, maxLength: 128 },
      },
    },
    slurm: {
      type: 'object',
      required: ['job', 'script'],
      additionalProperties: false,
      properties: {
        job: { type: 'string', minLength: 1, maxLength: 128 },
        script: { type: 'string', minLength: 1, maxLength: 4096 },
      },
    },
    url: { type: 'string', minLength: 1, maxLength: 2048 },
    sudo: { type: 'boolean' },
    ssh: {
      type: 'object',
      additionalProperties: false,
      properties: { client: { enum: ['auto', 'ssh2', 'openssh'] } },
    },
    nodes: { type: 'array', items: nodeSchema, minItems: 2, maxItems: 64 },
  },
} as const;

const settingsSchema = {
  type: 'object',
  properties: {
    servers: { type: 'array', items: serverSchema, maxItems: 100 },
    activeServer: { type: 'string', maxLength: 64 },
    knownHostsFile: { type: 'string', minLength: 1, maxLength: 4096 },
    hostKeyPolicy: { enum: ['ask', 'strict', 'accept-new'] },
    'ssh.client': { enum: ['auto', 'ssh2', 'openssh'] },
    confirmRestart: { type: 'boolean' },
    pollIntervalSeconds: { type: 'number', minimum: 0.25, maximum: 60 },
    loadTimeoutMinutes: { type: 'number', minimum: 1, maximum: 600 },
    stallSeconds: { type: 'number', minimum: 10, maximum: 3600 },
    unreachableTimeoutMinutes: { type: 'number', minimum: 0.1, maximum: 120 },
    notifyWhenReady: { type: 'boolean' },
    verifyParsersWhenReady: { type: 'boolean' },
    watchAfterReady: { type: 'boolean' },
    healthIntervalSeconds: { type: 'number', minimum: 5, maximum: 3600 },
  },
} as const;

let validateShape: ValidateFunction | undefined;

/** Ajv loads and compiles on first use, not while the extension activates. */
export function shapeValidator(): ValidateFunction {
  if (!validateShape) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { default: Ajv } = require('ajv') as typeof import('ajv');
    validateShape = new Ajv({ allErrors: true, validateSchema: false, meta: false, code: { optimize: false } }).compile(
      settingsSchema,
    );
  }
  return validateShape;
}

function settingName(error: ErrorObject): string {
  const path = error.instancePath.split('/').filter(Boolean);
  let name = SECTION;
  for (const part of path) name += /^\d+$/.test(part) ? `[${part}]` : `.${part}`;
  if (error.keyword === 'required') name += `.${String(error.params.missingProperty)}`;
  if (error.keyword === 'additionalProperties') name += `.${String(error.params.additionalProperty)}`;
  return name;
}

export function describeShapeError(error: ErrorObject): string {
  const name = settingName(error);
  switch (error.keyword) {
    case 'required':
      return settingMissing(name);
    case 'additionalProperties':
      return settingUnknownField(name);
    case 'enum':
      return settingNotOneOf(name, (error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', '));
    default:
      return settingInvalid(name, error.message);
  }
}
