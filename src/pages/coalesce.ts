/**
 * Runs `task` now, or — when it is already running — once more right after it ends, however many
 * times it was asked for meanwhile: a page re-reads the room at most once per burst of events.
 */
export function coalesce(task: () => Promise<void>): () => void {
  let running = false;
  let again = false;
  const run = () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    task()
      .catch(() => undefined)
      .finally(() => {
        running = false;
        if (again) {
          again = false;
          run();
        }
      });
  };
  return run;
}
