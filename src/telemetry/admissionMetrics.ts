/** Admission holds on /metrics: which job types an operator holds now. */
import { Gauge } from 'prom-client';
import { listAdmissionHolds } from '../db/admissionHolds';
import type { Queryable } from '../db/pool';
import type { MetricsRegistry } from './histograms';

/** Registers the gauge in `registry`, read from `db` at each scrape. */
export function addAdmissionMetrics(registry: MetricsRegistry, db: Queryable): void {
  new Gauge({
    name: 'onejob_admissions_held',
    help: 'Admission holds in force: 1 per held job type, job_type "*" for every type (from the database; none: absent)',
    labelNames: ['job_type'],
    registers: [registry],
    async collect() {
      const holds = await listAdmissionHolds(db);
      this.reset();
      for (const hold of holds) this.set({ job_type: hold.jobType ?? '*' }, 1);
    },
  });
}
