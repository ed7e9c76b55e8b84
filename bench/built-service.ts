// `--import ./bench/built-service.ts` (after tsx; see SERVICE_UNDER_TEST_FLAGS in child.ts): the
// servers under test load the service as `npm start` runs it, from dist/ (tsc's output), not from
// src/ through tsx. tsx compiles with esbuild's keepNames, which wraps each named function a request
// creates in a defineProperty call (`__name`): a cost our users never pay, nor the peers (plain
// JavaScript from node_modules). bench/ itself still runs through tsx.

import { register } from 'node:module';

register(new URL('./built-service-hooks.ts', import.meta.url));
