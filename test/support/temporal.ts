import { isOpenRunStatus } from '../../src/domain/runStatus';
import { requestWorkflowPause } from '../../src/service/workflowPause';
import { statusQuery } from '../../src/workflows/definitions';
import { eventually } from './polling';
import type { TestStack } from './stack';

/** What the job's workflow says of itself (its status query). */
export async function workflowStatus(stack: TestStack, workflowId: string) {
  return stack.temporal.workflow.getHandle(workflowId).query(statusQuery);
}

/** Waits until the latest run of a workflow has closed, and says how. */
export async function untilWorkflowClosed(
  stack: TestStack,
  workflowId: string,
  timeoutMs = 20_000,
) {
  const described = await eventually(
    () => stack.temporal.workflow.getHandle(workflowId).describe(),
    (d) => !isOpenRunStatus(d.status.name),
    timeoutMs,
  );
  return described.status.name;
}

/**
 * Every run Temporal keeps under a workflow id, read once the latest run has closed and the
 * visibility store (eventually consistent) shows it closed: a run started before it cannot be
 * missing from the list by lag.
 */
export async function runsOfWorkflow(stack: TestStack, workflowId: string): Promise<string[]> {
  await untilWorkflowClosed(stack, workflowId);
  const { runId } = await stack.temporal.workflow.getHandle(workflowId).describe();
  const listed = await eventually(
    async () => {
      const runs: Array<{ runId: string; closed: boolean }> = [];
      for await (const run of stack.temporal.workflow.list({
        query: `WorkflowId = "${workflowId}"`,
      })) {
        runs.push({ runId: run.runId, closed: !isOpenRunStatus(run.status.name) });
      }
      return runs;
    },
    (runs) => runs.some((run) => run.runId === runId && run.closed),
  );
  return listed.map((run) => run.runId);
}

/** Temporal's own pause or unpause of a workflow (1.30+), as the Web UI or a newer CLI makes it. */
export function setWorkflowPaused(
  stack: TestStack,
  action: 'pause' | 'unpause',
  workflowId: string,
  reason: string,
) {
  return requestWorkflowPause(stack.temporal, action, {
    workflowId,
    reason,
    identity: 'operator@incident',
  });
}
