// The README for the VSIX (vsce --readme-path): README.md with its relative links and pictures
// turned into plain text, because the package has no public repository URL to resolve them
// against (vsce refuses relative links then). Links to web pages are kept.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';

const isRelative = (target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('#');
const text = readFileSync('README.md', 'utf8')
  // A picture on its own line: dropped (its alt text says what the repository's README shows).
  .replace(/^!\[([^\]]*)\]\(([^)]+)\)\s*$/gm, (whole, alt, target) =>
    isRelative(target) ? `*Picture in the repository's README: ${alt}.*` : whole,
  )
  .replace(/\[([^\]]+)\]\(([^)]+)\)/g, (whole, label, target) =>
    isRelative(target)
      ? label === target || label.endsWith('.md')
        ? `\`${target}\``
        : `${label} (\`${target}\`)`
      : whole,
  );
mkdirSync('dist', { recursive: true });
writeFileSync('dist/README.md', text);
