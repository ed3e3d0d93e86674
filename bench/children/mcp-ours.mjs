// The tools module of `tool-registry mcp --tools` in bench/mcp.mjs: the shapes of mcp-tools.mjs as defineTool tools.
import { z } from 'zod';
import { defineTool } from '../../dist/index.js';
import { COUNT, answer, toolShape } from './mcp-tools.mjs';

export default Array.from({ length: COUNT }, (_, i) => {
  const { name, description, shape } = toolShape(i);
  return defineTool({ name, version: '1', description, input_schema: z.object(shape), handler: answer });
});
