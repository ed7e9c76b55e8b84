// The package's index loads every store it has (Redis, Mongo, SQL, ...): 11.5 MB of RSS. These are
// the files the edge uses (0.8 MB; RateLimiterRedis only with REDIS_URL, loaded then), typed with
// the package's own declarations.
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
