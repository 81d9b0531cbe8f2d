-- Duplicates answer from the row (issue 34). The request that inserts a job holds a lease on
-- starting its workflow until this time (PostgreSQL's clock). While it holds, a duplicate of the
-- same key is answered from the row without calling Temporal; once it has passed (the creator
-- crashed between the insert and the start, or gave the lease back when Temporal refused the
-- start) the next duplicate takes the lease in one UPDATE and starts the workflow itself, so a
-- storm of duplicates makes one start, never one each. NULL: nobody holds it (rows made before
-- this migration, and rows whose workflow wrote them itself).
ALTER TABLE jobs ADD COLUMN start_lease_until timestamptz;
