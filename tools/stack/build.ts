import path from 'node:path';
import { PACKAGE_ROOT } from '../../src/domain/packageRoot';

/**
 * Where `npm run build` puts its output: the product in dist/src (what the package and the
 * service's image ship), the tools in dist/tools. Everything that runs a compiled file asks here.
 */
export const BUILT_PRODUCT = path.join(PACKAGE_ROOT, 'dist', 'src');
const BUILT_TOOLS = path.join(PACKAGE_ROOT, 'dist', 'tools');

/** A compiled file of the product: `builtProduct('bin', 'api.js')`. */
export const builtProduct = (...parts: string[]): string => path.join(BUILT_PRODUCT, ...parts);

/** A compiled file of the tools: `builtTool('simulator', 'main.js')`. */
export const builtTool = (...parts: string[]): string => path.join(BUILT_TOOLS, ...parts);
