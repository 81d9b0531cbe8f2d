-- Per-owner rate limits on by default (issue 55, item 1): besides creates, an owner's requests to
-- the webhook routes draw from a bucket of their own. One table holds every kind of bucket, named
-- by `bucket`; the rows made before this migration are create buckets.
ALTER TABLE owner_create_buckets RENAME TO owner_buckets;
ALTER TABLE owner_buckets
  ADD COLUMN bucket text NOT NULL DEFAULT 'creates' CHECK (bucket IN ('creates', 'webhooks'));
ALTER TABLE owner_buckets ALTER COLUMN bucket DROP DEFAULT;
ALTER TABLE owner_buckets DROP CONSTRAINT owner_create_buckets_pkey;
ALTER TABLE owner_buckets ADD PRIMARY KEY (owner_id, bucket);
