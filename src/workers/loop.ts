import type { Logger } from "../log.js";

/**
 * Runs `tick` every `intervalMs` (never two at once) until stopped. A failing tick is logged and
 * retried at the next interval. `stop` waits for a running tick to finish.
 */
export function startLoop(name: string, intervalMs: number, tick: () => Promise<unknown>, log: Logger): { stop: () => Promise<void> } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const run = () => {
    running = tick()
      .then(
        () => undefined,
        (err) => log.error({ worker: name, err }, "worker tick failed"),
      )
      .finally(() => {
        if (!stopped) timer = setTimeout(run, intervalMs);
      });
  };
  timer = setTimeout(run, intervalMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
