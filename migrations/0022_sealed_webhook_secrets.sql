-- Issue 55 (N8). Webhook signing secrets are stored sealed (AES-256-GCM under a key of
-- ONEJOB_SECRET_KEYS, src/domain/secretSealing.ts), never as the whsec_ text itself. A
-- migration cannot know the key, so the rows written before this one are sealed by the first
-- service that boots after it (prepareWebhookSecrets), before it serves anything.
ALTER TABLE webhook_secrets DROP CONSTRAINT webhook_secrets_secret_check;

-- Every row written or changed from now on must be sealed: a plaintext secret is refused. NOT
-- VALID leaves the rows that are still plaintext until the boot seals them (each one then passes).
ALTER TABLE webhook_secrets ADD CONSTRAINT webhook_secrets_sealed
  CHECK (secret ~ '^v1\.[A-Za-z0-9_-]{1,32}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22,}$') NOT VALID;

-- The sweeper purges secrets past their expiry; this finds them without reading the live ones.
CREATE INDEX webhook_secrets_expiring_idx ON webhook_secrets (expires_at) WHERE expires_at IS NOT NULL;
