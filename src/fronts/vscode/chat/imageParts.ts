/**
 * Images in chat messages: the editor's `LanguageModelDataPart`s with an image mime type become
 * OpenAI `image_url` content parts (data: URLs), which SGLang and vLLM take for vision models.
 * A model that takes no images refuses them by name: nothing is dropped on the way.
 */

export interface NeutralImage {
  readonly kind: 'image';
  readonly mimeType: string;
  readonly data: Uint8Array;
}

/** The image types OpenAI-compatible vision servers decode. */
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/jpg', 'image/gif', 'image/webp', 'image/bmp']);

export function isImageMime(mimeType: string): boolean {
  return IMAGE_TYPES.has(mimeType.toLowerCase().split(';')[0]!.trim());
}

/** An image part from a data part's mime type and bytes, or undefined when it is not an image. */
export function imagePart(mimeType: unknown, data: unknown): NeutralImage | undefined {
  if (typeof mimeType !== 'string' || !(data instanceof Uint8Array) || !isImageMime(mimeType)) return undefined;
  return { kind: 'image', mimeType: mimeType.toLowerCase().split(';')[0]!.trim(), data };
}

export type OpenAiContentPart =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'image_url'; readonly image_url: { readonly url: string } };

export function imageUrlPart(image: NeutralImage): OpenAiContentPart {
  return {
    type: 'image_url',
    image_url: { url: `data:${image.mimeType};base64,${Buffer.from(image.data).toString('base64')}` },
  };
}

/** A message's text and images in their order, as OpenAI content parts (adjacent texts joined). */
export function contentParts(
  parts: readonly ({ readonly kind: string; readonly text?: string } | NeutralImage)[],
): OpenAiContentPart[] {
  const out: OpenAiContentPart[] = [];
  for (const p of parts) {
    if (p.kind === 'image') out.push(imageUrlPart(p as NeutralImage));
    else if (p.kind === 'text' && typeof p.text === 'string' && p.text !== '') {
      const last = out[out.length - 1];
      if (last?.type === 'text') out[out.length - 1] = { type: 'text', text: last.text + p.text };
      else out.push({ type: 'text', text: p.text });
    }
  }
  return out;
}

/** Images a tool returned go in a user message right after the tool messages (a `tool` message carries text only). */
export function toolImagesMessage(
  results: readonly { readonly callId: string; readonly images?: readonly NeutralImage[] }[],
): { readonly role: 'user'; readonly content: OpenAiContentPart[] } | undefined {
  const content = results.flatMap((r) =>
    r.images && r.images.length > 0
      ? [{ type: 'text' as const, text: `Image(s) returned by tool call ${r.callId}:` }, ...r.images.map(imageUrlPart)]
      : [],
  );
  return content.length > 0 ? { role: 'user', content } : undefined;
}

/** How many images a conversation carries (message parts and tool results). */
export function imageCount(
  messages: readonly { readonly parts: readonly { readonly kind: string; readonly images?: readonly unknown[] }[] }[],
): number {
  let n = 0;
  for (const m of messages)
    for (const p of m.parts) n += p.kind === 'image' ? 1 : p.kind === 'toolResult' ? (p.images?.length ?? 0) : 0;
  return n;
}

/** The error for images sent to a model that takes none (undefined: nothing to refuse). */
export function imageRefusal(
  count: number,
  modelName: string,
  accepted: boolean,
  why: string | undefined,
): string | undefined {
  if (count === 0 || accepted) return undefined;
  return `${modelName} does not take images (${why ?? 'its config.json has no vision tower'}); the request carries ${count} image(s). Remove them or choose a vision model.`;
}
