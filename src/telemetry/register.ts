// The `node --import` entry of package.json's start script. Tracing patches node:http and the MongoDB
// driver's modules as they load, so it must start before main.ts imports them; with no OTLP endpoint
// in the environment this file loads nothing else and nothing is patched.
import { tracingRequested } from './settings.ts';

if (tracingRequested(process.env)) {
  const { startTracing, clientAddressFromEnvironment } = await import('./tracing.ts');
  const { sayRefusal } = await import('../start-refusal.ts');
  try {
    startTracing({ clientAddress: clientAddressFromEnvironment(process.env) });
  } catch (error) {
    // Like a bad setting in config.ts: say why and stop, rather than run untraced by surprise.
    sayRefusal(`invalid tracing configuration (OTEL_* variables): ${(error as Error).message}`);
    process.exit(1);
  }
}
