import { Metadata } from '@grpc/grpc-js';
import { ServiceError } from '@temporalio/client';
import { isWorkflowTaskFailing } from '../src/service/errors';

/** An update's failure as the Temporal client throws it: its ServiceError around the gRPC one. */
function updateFailure(code: number, details: string): Error {
  const grpc = Object.assign(new Error(`${code} ${details}`), {
    code,
    details,
    metadata: new Metadata(),
  });
  return new ServiceError('Workflow Update failed', { cause: grpc });
}

test.each([
  ['turned away while the workflow task is in a failed state', 'Workflow Task in failed state.'],
  [
    // The fault campaign saw it (seed 20261130): a signal came as the workflow completed.
    'whose wait a failed workflow task ended (a signal raced the completion)',
    'Unable to perform workflow execution update due to unexpected workflow task failure.',
  ],
])('an update %s is one to send again under its id', (_case, details) => {
  expect(isWorkflowTaskFailing(updateFailure(9, details))).toBe(true);
});

test('other refusals of an update are not sent again', () => {
  expect(isWorkflowTaskFailing(updateFailure(9, 'workflow execution already completed'))).toBe(
    false,
  );
  expect(isWorkflowTaskFailing(updateFailure(5, 'Workflow Task in failed state.'))).toBe(false);
});
