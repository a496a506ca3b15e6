/**
 * The guessers of the password-storm case as their own process (forked by
 * bench/cases/password-storm.ts), so the attack's client side does not share the service's event
 * loop: one guesser per room in GUESS_ROOMS, each sending the next wrong password as soon as the
 * last is answered, from its own address (X-Forwarded-For; the service trusts this loopback hop).
 * Reports once the first wave has been hashed, and its tally of answers when told to stop.
 */
const base = process.env.GUESS_BASE!;
const rooms = JSON.parse(process.env.GUESS_ROOMS!) as string[];
const answers = new Map<string, number>();
/** Past the first wave once this many guesses have been hashed: twice the queue's places. */
const FIRST_WAVE = 12;
let storming = true;
let warm = false;

process.on('message', () => {
  storming = false;
});

async function guesser(slug: string, i: number): Promise<void> {
  for (let n = 0; storming; n++) {
    const response = await fetch(`${base}/api/rooms/${slug}/join`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': `198.51.100.${i + 10}` },
      body: JSON.stringify({ password: `guess ${n}` }),
    });
    const body = (await response.json()) as { error?: { code?: string } };
    const kind = response.status === 429 ? 'refused' : String(body.error?.code ?? response.status);
    answers.set(kind, (answers.get(kind) ?? 0) + 1);
    if (!warm && (answers.get('auth.invalid_password') ?? 0) >= FIRST_WAVE) {
      // Past the first wave: the guessers that found a place on their very first try (one never
      // seen before is as quiet as anyone, the rightful client included) have all been hashed.
      warm = true;
      process.send?.({ warm: true });
    }
  }
}

await Promise.all(rooms.map(guesser));
process.send?.({ answers: Object.fromEntries(answers) });
process.disconnect?.();
