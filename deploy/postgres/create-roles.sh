#!/usr/bin/env bash
# Runs once, when the PostgreSQL container first initialises its data folder (the official
# image runs /docker-entrypoint-initdb.d/*.sh as the superuser). It gives the application and
# Temporal their own roles, so no service ever holds the superuser's password:
#   onejob_owner  owns only the database onejob (and so its public schema): the migrate step
#                 (bin/migrate.js) applies the migrations as it, and nothing else logs in as it
#   onejob        the API's and the worker's role: reads and writes rows of onejob's tables,
#                 never changes the schema (deploy/postgres/app-role.sql; ONEJOB_MIGRATIONS=verify)
#   temporal      may create databases (Temporal's SQL tool creates its two) and owns only those
# Passwords come from the environment and are passed to psql as variables, never on a command line.
set -euo pipefail
: "${ONEJOB_DB_PASSWORD:?ONEJOB_DB_PASSWORD is not set}"
: "${ONEJOB_OWNER_DB_PASSWORD:?ONEJOB_OWNER_DB_PASSWORD is not set}"
: "${TEMPORAL_DB_PASSWORD:?TEMPORAL_DB_PASSWORD is not set}"

psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  -v app_password="$ONEJOB_DB_PASSWORD" -v owner_password="$ONEJOB_OWNER_DB_PASSWORD" \
  -v temporal_password="$TEMPORAL_DB_PASSWORD" <<'SQL'
CREATE ROLE onejob_owner LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD :'owner_password';
CREATE ROLE onejob LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD :'app_password';
CREATE DATABASE onejob OWNER onejob_owner;
REVOKE ALL ON DATABASE onejob FROM PUBLIC;
GRANT CONNECT ON DATABASE onejob TO onejob_owner, onejob;
CREATE ROLE temporal LOGIN NOSUPERUSER CREATEDB NOCREATEROLE PASSWORD :'temporal_password';
SQL

# In onejob's database: what the services' role may do there, now and in every later migration.
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname onejob \
  -v owner_role=onejob_owner -v app_role=onejob -f /etc/onejob/postgres/app-role.sql
