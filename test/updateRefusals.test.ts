import { ServiceError as TemporalServiceError } from '@temporalio/client';
import { isDependencyUnavailable } from '../src/api/unavailable';
import { isWorkflowTaskFailing } from '../src/service/errors';

/**
 * How the API reads Temporal turning an update away because the workflow's task failed: nothing
 * was accepted, so the update is sent again for a while and then answered 503 with Retry-After,
 * never 500. The errors are built as @temporalio/client throws them: its ServiceError around the
 * gRPC status (FAILED_PRECONDITION, 9) with the server's words in `details`.
 */
function turnedAway(details: string): Error {
  const status = Object.assign(new Error(`9 FAILED_PRECONDITION: ${details}`), {
    code: 9,
    details,
    metadata: {},
  });
  return new TemporalServiceError('Workflow Update failed', { cause: status });
}

test.each([
  'Unable to perform workflow execution update due to Workflow Task in failed state.',
  // The task carrying the update failed (a signal came in while it completed the workflow): a
  // fault campaign got a 500 for an operator's resolve here.
  'Unable to perform workflow execution update due to unexpected workflow task failure.',
])(
  'an update turned away because the workflow task failed is sent again, then answered 503: %s',
  (details) => {
    const error = turnedAway(details);
    expect(isWorkflowTaskFailing(error)).toBe(true);
    expect(isDependencyUnavailable(error)).toBe(true);
  },
);

test('another FAILED_PRECONDITION is not taken for a failing workflow task', () => {
  const error = turnedAway('Workflow Update is rejected: the update handler refused it.');
  expect(isWorkflowTaskFailing(error)).toBe(false);
  expect(isDependencyUnavailable(error)).toBe(false);
});
