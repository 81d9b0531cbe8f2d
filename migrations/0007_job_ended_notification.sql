-- Wakes `?wait=` requests the moment a job ends instead of at their next look at the row: each
-- API process listens on this channel (src/db/jobEndings.ts). Sent when the row becomes
-- terminal, whichever statement made it so, and delivered only if that transaction commits.
CREATE FUNCTION notify_job_ended() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('onejob_job_ended', NEW.id::text);
  RETURN NULL;
END
$$;

CREATE TRIGGER jobs_notify_ended
  AFTER UPDATE OF terminal_status ON jobs
  FOR EACH ROW
  WHEN (OLD.terminal_status IS NULL AND NEW.terminal_status IS NOT NULL)
  EXECUTE FUNCTION notify_job_ended();
