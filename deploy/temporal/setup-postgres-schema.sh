#!/bin/sh
# Creates, or brings up to date, the Temporal server's two PostgreSQL databases with Temporal's
# own SQL tool. One script for every place that runs the server on PostgreSQL: `npm start` and
# the tests in cluster mode (tools/stack/temporalCluster.ts) and docker-compose.yml.
# Every step is safe to repeat: create-database ignores an existing database, setup-schema
# -v 0.0 only creates the version tables, and update-schema applies the versions not yet applied.
# The password travels in SQL_PASSWORD, which the tool reads itself: it never appears in `ps`.
# POSIX sh: Temporal's admin-tools image runs it with sh.
set -eu

: "${SQL_TOOL:=temporal-sql-tool}"
: "${TEMPORAL_SCHEMA_DIR:?the folder holding temporal/versioned and visibility/versioned}"
: "${SQL_HOST:=127.0.0.1}"
: "${SQL_PORT:=5432}"
: "${SQL_USER:?the PostgreSQL user}"
: "${TEMPORAL_DB:=temporal}"
: "${TEMPORAL_VISIBILITY_DB:=temporal_visibility}"
export SQL_PASSWORD="${SQL_PASSWORD:-}"

for pair in "$TEMPORAL_DB:temporal" "$TEMPORAL_VISIBILITY_DB:visibility"; do
  db="${pair%%:*}"
  schema="${pair##*:}"
  sql() {
    "$SQL_TOOL" --plugin postgres12 --endpoint "$SQL_HOST" --port "$SQL_PORT" \
      --user "$SQL_USER" --database "$db" "$@"
  }
  echo "== $db: $schema schema"
  sql create-database
  sql setup-schema -v 0.0
  sql update-schema -d "$TEMPORAL_SCHEMA_DIR/$schema/versioned"
done
