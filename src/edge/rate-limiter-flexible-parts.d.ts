// The package's index loads every store it has (Redis, Mongo, SQL, ...); its README's "Import" section
// also offers each file alone, which is all the edge loads (RateLimiterRedis only with REDIS_URL).
// Typed with the package's own declarations; test/rate-limiter-flexible-parts.test.ts holds each file
// to the index's export of the same name.
declare module 'rate-limiter-flexible/lib/RateLimiterMemory.js' {
  import { RateLimiterMemory } from 'rate-limiter-flexible';
  export default RateLimiterMemory;
}
declare module 'rate-limiter-flexible/lib/RateLimiterRedis.js' {
  import { RateLimiterRedis } from 'rate-limiter-flexible';
  export default RateLimiterRedis;
}
declare module 'rate-limiter-flexible/lib/RateLimiterCompatibleAbstract.js' {
  import { RateLimiterCompatibleAbstract } from 'rate-limiter-flexible';
  export default RateLimiterCompatibleAbstract;
}
declare module 'rate-limiter-flexible/lib/BurstyRateLimiter.js' {
  import { BurstyRateLimiter } from 'rate-limiter-flexible';
  export default BurstyRateLimiter;
}
declare module 'rate-limiter-flexible/lib/RateLimiterRes.js' {
  import { RateLimiterRes } from 'rate-limiter-flexible';
  export default RateLimiterRes;
}
