// The README for the VSIX (vsce --readme-path, --no-rewrite-relative-links): README.md with its
// pictures kept as relative links to docs/images, which the VSIX carries (.vscodeignore), so
// the extension's page in VS Code shows them from the installed extension without a network;
// relative links to the docs point at the repository (package.json's `repository`), where they
// are read. Links to web pages are kept.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';

const repository = JSON.parse(readFileSync('package.json', 'utf8')).repository;
const repoUrl = (typeof repository === 'string' ? repository : (repository?.url ?? '')).replace(/\.git$/, '');
if (!/^https:\/\//.test(repoUrl)) throw new Error('package.json has no https repository URL');

const isRelative = (target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('#');
const isPicture = (target) => /^(\.\/)?docs\/images\/[^/]+\.(png|jpe?g|gif|webp)$/i.test(target);
const text = readFileSync('README.md', 'utf8').replace(/(!?)\[([^\]]*)\]\(([^)]+)\)/g, (whole, bang, label, target) => {
  if (!isRelative(target)) return whole;
  if (bang) {
    if (!isPicture(target)) throw new Error(`README picture outside docs/images: ${target}`);
    return whole;
  }
  return `[${label}](${repoUrl}/blob/HEAD/${target.replace(/^\.\//, '')})`;
});
mkdirSync('dist', { recursive: true });
writeFileSync('dist/README.md', text);
