/**
 * The domain series read off each room commit (docs/architecture.md, Observability): rooms created
 * and concluded, decisions opened and sealed by mechanism, receipts signed. A commit's events say
 * what happened; its state says under which mechanism. Counted where the commit is made, so a
 * process counts its own commits and the series add up across replicas.
 */
import { decisionById } from '../domain/state.js';
import type { CommitNotice } from '../runtime/registry.js';
import type { ServiceMetrics } from './metrics.js';

export function observeCommit(metrics: ServiceMetrics, notice: CommitNotice): void {
  if (notice.created) metrics.room('created');
  metrics.receiptsSigned(notice.receipts);
  for (const event of notice.events) {
    switch (event.event_type) {
      case 'decision.opened':
        metrics.decisionOpened(notice.state.room.config.mechanism);
        break;
      case 'decision.completed': {
        const decision = event.decision_id === null ? undefined : decisionById(notice.state, event.decision_id);
        const seal = decision?.data.seal;
        metrics.decisionSealed(seal?.mechanism ?? notice.state.room.config.mechanism, String(event.data.status));
        break;
      }
      case 'room.concluded':
        metrics.room('concluded');
        break;
    }
  }
}
