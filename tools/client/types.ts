import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import { PACKAGE_ROOT } from '../../src/domain/packageRoot';

/**
 * The client package's types come from the API's own OpenAPI document, generated, never written
 * by hand: `npm run client:types` writes them from a running API (npm start's by default), and
 * the tests hold the checked-in file to the document of the API they run, so the two cannot
 * drift apart.
 */
export const CLIENT_TYPES = path.join(PACKAGE_ROOT, 'client', 'src', 'openapi.ts');

const HEADER = `/**
 * Generated from the onejob API's OpenAPI document by \`npm run client:types\` (openapi-typescript).
 * Do not edit: the tests fail when this file and the API's document disagree.
 */
`;

/** The TypeScript types of an OpenAPI document, as the client package keeps them. */
export async function clientTypesOf(document: unknown): Promise<string> {
  const ast = await openapiTS(document as OpenAPI3, { alphabetize: true });
  return `${HEADER}${astToString(ast)}`;
}

async function documentFrom(source: string): Promise<unknown> {
  if (/^https?:\/\//.test(source)) {
    const response = await fetch(source);
    if (!response.ok) throw new Error(`${source} answered ${response.status}`);
    return response.json();
  }
  return JSON.parse(readFileSync(source, 'utf8'));
}

/**
 * `types.js [--check] [document]`: the document is a URL or a file (default: npm start's API).
 * With --check, exits 1 when the checked-in types differ from the document's.
 */
async function main(argv: string[]): Promise<number> {
  const check = argv.includes('--check');
  const source = argv.find((arg) => !arg.startsWith('--')) ?? 'http://127.0.0.1:3000/docs/json';
  const types = await clientTypesOf(await documentFrom(source));
  if (!check) {
    writeFileSync(CLIENT_TYPES, types);
    console.log(`wrote ${path.relative(process.cwd(), CLIENT_TYPES)} from ${source}`);
    return 0;
  }
  if (readFileSync(CLIENT_TYPES, 'utf8') === types) return 0;
  console.error(
    `${path.relative(process.cwd(), CLIENT_TYPES)} is not the API's document: run npm run client:types with the API running`,
  );
  return 1;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : String(error));
      process.exit(1);
    },
  );
}
