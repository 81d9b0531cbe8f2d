#!/usr/bin/env bash
# Runs once, when the PostgreSQL container first initialises its data folder (the official
# image runs /docker-entrypoint-initdb.d/*.sh as the superuser). It gives the application and
# Temporal each their own role, so neither service ever holds the superuser's password:
#   onejob    owns only the database onejob (and so its public schema): its migrations, run by
#             the API and worker at start, create tables there and nowhere else
#   temporal  may create databases (Temporal's SQL tool creates its two) and owns only those
# Passwords come from the environment and are passed to psql as variables, never on a command line.
set -euo pipefail
: "${ONEJOB_DB_PASSWORD:?ONEJOB_DB_PASSWORD is not set}"
: "${TEMPORAL_DB_PASSWORD:?TEMPORAL_DB_PASSWORD is not set}"

psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  -v app_password="$ONEJOB_DB_PASSWORD" -v temporal_password="$TEMPORAL_DB_PASSWORD" <<'SQL'
CREATE ROLE onejob LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD :'app_password';
CREATE DATABASE onejob OWNER onejob;
REVOKE ALL ON DATABASE onejob FROM PUBLIC;
CREATE ROLE temporal LOGIN NOSUPERUSER CREATEDB NOCREATEROLE PASSWORD :'temporal_password';
SQL
