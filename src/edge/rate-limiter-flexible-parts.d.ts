// The package's index loads every store it has (Redis, Mongo, SQL, ...): 11.5 MB of RSS. These are
// the three files the edge uses (0.8 MB), typed with the package's own declarations.
declare module 'rate-limiter-flexible/lib/RateLimiterMemory.js' {
  import { RateLimiterMemory } from 'rate-limiter-flexible';
  export default RateLimiterMemory;
}
declare module 'rate-limiter-flexible/lib/BurstyRateLimiter.js' {
  import { BurstyRateLimiter } from 'rate-limiter-flexible';
  export default BurstyRateLimiter;
}
declare module 'rate-limiter-flexible/lib/RateLimiterRes.js' {
  import { RateLimiterRes } from 'rate-limiter-flexible';
  export default RateLimiterRes;
}
