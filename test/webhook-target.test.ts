import { describe, expect, it } from 'vitest';
import { resolveTarget, TargetRefusedError, targetProblem } from '../src/webhooks/webhook-target.ts';

const REFUSED = { allowPrivate: false };
const ALLOWED = { allowPrivate: true };
const NEVER = new AbortController().signal;

describe('targetProblem: what a webhook URL may be, without DNS', () => {
  it('accepts a public https URL', () => {
    expect(targetProblem('https://example.com/', REFUSED)).toBeUndefined();
    expect(targetProblem('http://8.8.8.8:8080/hooks?token=t', REFUSED)).toBeUndefined();
  });

  it.each([
    ['ftp://example.com/', 'the URL is neither http: nor https:'],
    ['https://user:secret@example.com/', 'the URL carries a user name or password'],
    [`https://example.com/${'a'.repeat(2_048)}`, 'the URL is longer than 2,048 characters'],
    ['not a url', 'the URL cannot be parsed'],
  ])('refuses %s, even with allowPrivate', (url, problem) => {
    expect(targetProblem(url, REFUSED)).toBe(problem);
    expect(targetProblem(url, ALLOWED)).toBe(problem);
  });

  it.each([
    ['http://10.0.0.1/', 'the host is a private address (10.0.0.1)'],
    ['http://[::1]/', 'the host is a loopback address (::1)'],
    ['http://169.254.169.254/latest/meta-data/', 'the host is a link-local address (169.254.169.254)'],
    ['http://0.0.0.0/', 'the host is an unspecified address (0.0.0.0)'],
    ['http://[::ffff:127.0.0.1]/', 'the host is a loopback address (::ffff:7f00:1)'],
    ['http://[fd00::1]/', 'the host is a unique-local address (fd00::1)'],
    ['http://100.64.0.1/', 'the host is a carrier-grade NAT address (100.64.0.1)'],
    ['http://0x7f.1/', 'the host is a loopback address (127.0.0.1)'],
    ['http://[2002:a00:1::]/', 'the host is a special-purpose address (2002:a00:1::)'],
  ])('refuses %s as %j, and accepts it with allowPrivate', (url, problem) => {
    expect(targetProblem(url, REFUSED)).toBe(problem);
    expect(targetProblem(url, ALLOWED)).toBeUndefined();
  });

  it('never repeats the path, query or credentials in its message', () => {
    const problems = [
      targetProblem('http://alice:secret@example.com/', REFUSED),
      targetProblem('http://10.0.0.1/secret?token=secret', REFUSED),
      targetProblem(`http://example.com/secret?token=${'secret'.repeat(400)}`, REFUSED),
    ];
    expect(problems).not.toContain(undefined);
    expect(problems.join(' ')).not.toMatch(/alice|secret/);
  });
});

describe('resolveTarget: the one checked address to connect to', () => {
  it('refuses a name that resolves to loopback, naming the name, the class and the address', async () => {
    const refusal = resolveTarget(new URL('http://localhost:1/secret?token=secret'), { ...REFUSED, signal: NEVER });
    await expect(refusal).rejects.toBeInstanceOf(TargetRefusedError);
    await expect(refusal).rejects.toThrow(/^localhost resolves to a loopback address \((127\.0\.0\.1|::1)\)$/);
  });

  it('with allowPrivate, answers the resolved loopback address and its family', async () => {
    const target = await resolveTarget(new URL('http://localhost/'), { ...ALLOWED, signal: NEVER });
    expect(target).toEqual(
      expect.objectContaining({ address: expect.stringMatching(/^(127\.0\.0\.1|::1)$/), family: expect.any(Number) }),
    );
    expect(target.family).toBe(target.address.includes(':') ? 6 : 4);
  });

  it('checks a literal address without DNS, seeing through IPv4-mapped IPv6', async () => {
    const mapped = new URL('http://[::ffff:10.0.0.1]/');
    await expect(resolveTarget(mapped, { ...REFUSED, signal: NEVER })).rejects.toThrow(
      'the host is a private address (::ffff:a00:1)',
    );
    await expect(resolveTarget(new URL('http://8.8.8.8/'), { ...REFUSED, signal: NEVER })).resolves.toEqual({
      address: '8.8.8.8',
      family: 4,
    });
  });

  it('gives up with the signal’s reason once it is aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('deadline'));
    await expect(
      resolveTarget(new URL('http://localhost/'), { ...ALLOWED, signal: controller.signal }),
    ).rejects.toThrow('deadline');
  });
});
